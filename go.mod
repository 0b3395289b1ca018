module github.com/tadpole-trace/tadpole

go 1.23.0

require (
	github.com/klauspost/compress v1.20.3
	github.com/timandy/routine v1.1.6
	golang.org/x/sys v0.49.0
)
