//go:build !linux

package atomicfile

const oTmpfile = 0
