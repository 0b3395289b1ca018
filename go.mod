module github.com/tadpole-trace/tadpole

go 1.23.0

toolchain go1.26.8

require (
	github.com/klauspost/compress v1.18.2
	github.com/timandy/routine v1.1.6
	golang.org/x/sys v0.35.0
)
