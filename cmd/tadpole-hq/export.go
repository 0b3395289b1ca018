package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/calltree"
)

// exportOptions are the flags of "tadpole-hq export".
type exportOptions struct {
	format   string // -format: a calltree format name
	out      string // -o: the file written; "-" is stdout
	title    string
	byCalls  bool
	lenient  bool
	maxPaths int
	file     string // the trace file
}

const exportUsage = `Usage:
  tadpole-hq export -format speedscope|chrome|flame|flame-html [-o OUT] TRACEFILE

Replays a trace file through HQ and writes its calls:
  speedscope  speedscope's file format (one evented profile per thread);
              open it at https://www.speedscope.app or with npx speedscope OUT
  chrome      Chrome trace-event JSON (B/E events per thread), for Perfetto
              (ui.perfetto.dev) and chrome://tracing
  flame       a flame graph as one SVG file (click to zoom, Ctrl-F to search);
              -o NAME.html writes it inside an HTML page (as flame-html does)

Flags:
`

func parseExportFlags(args []string, stderr io.Writer) (*exportOptions, error) {
	fs := flag.NewFlagSet("tadpole-hq export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), exportUsage)
		fs.PrintDefaults()
	}
	o := &exportOptions{}
	fs.StringVar(&o.format, "format", "", "export format: speedscope, chrome, flame (SVG) or flame-html")
	fs.StringVar(&o.out, "o", "-", "file to write (- for stdout)")
	fs.StringVar(&o.title, "title", "", "title of the profile (default: the run and its agent)")
	fs.BoolVar(&o.byCalls, "by-calls", false, "flame: frame widths by calls instead of time")
	fs.BoolVar(&o.lenient, "lenient", false, "ids used before their mapping or mapped again do not fail the replay")
	fs.IntVar(&o.maxPaths, "max-paths", calltree.DefaultMaxPaths, "distinct call paths kept (further calls count as their caller's self time)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case o.format == "":
		return nil, errors.New("export: -format is required (or -ctf DIR for a CTF trace)")
	case fs.NArg() != 1:
		return nil, fmt.Errorf("export: want one trace file, got %d", fs.NArg())
	}
	o.file = fs.Arg(0)
	return o, nil
}

// runExport is "tadpole-hq export": it returns the exit status.
func runExport(args []string, stdout, stderr io.Writer) int {
	o, err := parseExportFlags(args, stderr)
	if err == flag.ErrHelp {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq:", err)
		return exitUsage
	}
	format, err := calltree.ParseFormat(o.format)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq: export:", err)
		return exitUsage
	}
	if format == calltree.FormatFlameSVG && strings.EqualFold(filepath.Ext(o.out), ".html") {
		format = calltree.FormatFlameHTML
	}
	cfg := calltree.DefaultConfig()
	cfg.MaxPaths = o.maxPaths
	if format == calltree.FormatFlameSVG || format == calltree.FormatFlameHTML {
		cfg.MaxTimeline = -1 // the flame graph needs the tree only
	}
	tree, err := calltree.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "tadpole-hq: export:", err)
		return exitUsage
	}
	status := exitOK
	rep, err := hq.ReplayFile(o.file, &hq.ReplayOptions{Processors: []hq.Processor{tree}, Lenient: o.lenient})
	if rep == nil {
		fmt.Fprintf(stderr, "tadpole-hq: %s: %v\n", o.file, err)
		return exitError
	}
	if err != nil {
		// A damaged file: export what could be read, and say so.
		fmt.Fprintf(stderr, "tadpole-hq: %s: %v (exporting what was read)\n", o.file, err)
		status = exitError
	}
	if err := writeExport(o, tree, format, stdout); err != nil {
		fmt.Fprintln(stderr, "tadpole-hq: export:", err)
		return exitError
	}
	st := tree.Stats()
	fmt.Fprintf(stderr, "tadpole-hq: %s: run %d %s; %s written to %s: %d calls on %d thread(s), %d call paths\n",
		o.file, rep.RunID, rep.Result(), format, o.out, st.Calls, st.Threads, st.Paths-1)
	for _, w := range tree.Warnings() {
		fmt.Fprintln(stderr, "tadpole-hq:", w)
	}
	return status
}

// writeExport writes the tree to o.out.
func writeExport(o *exportOptions, tree *calltree.Tree, format calltree.Format, stdout io.Writer) error {
	opt := &calltree.Options{Title: o.title, ByCalls: o.byCalls}
	if o.out == "-" {
		return tree.Write(stdout, format, opt)
	}
	f, err := os.Create(o.out)
	if err != nil {
		return err
	}
	if err := tree.Write(f, format, opt); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
