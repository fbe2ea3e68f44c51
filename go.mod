module github.com/xdev/xdev

go 1.26.8

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/google/uuid v1.6.0
	github.com/valyala/fastjson v1.6.10
)

require github.com/rivo/uniseg v0.4.7

require (
	github.com/rogpeppe/go-internal v1.16.0
	golang.org/x/sys v0.26.0
	golang.org/x/tools v0.26.0 // indirect
)
