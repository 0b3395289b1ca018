// Package bench compares tadpole with its peers side by side, in one run,
// and prints the ratios. It is its own module so that the main module's
// dependencies stay lean.
//
//	cd bench && go test -run Compare -v      # the side-by-side tables
//	cd bench && go test -bench . -benchmem   # the individual benchmarks
package bench
