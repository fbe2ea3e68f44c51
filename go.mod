module github.com/xdev/xdev

go 1.26.8

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/google/uuid v1.6.0
	github.com/valyala/fastjson v1.6.10
)
