package ctf

import (
	"fmt"
	"os"

	"github.com/tadpole-trace/tadpole/hq"
)

// ExportOptions configures Export.
type ExportOptions struct {
	Config  // Start and Flavor are taken from the trace file
	Lenient bool
}

// Export replays the HQ trace file at path into a CTF trace directory dir
// and returns the run's report.
func Export(dir, path string, opt *ExportOptions) (*hq.Report, error) {
	if opt == nil {
		opt = &ExportOptions{}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	tr, err := hq.NewTraceReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	h := tr.Header()
	tr.Close()
	f.Close()

	cfg := opt.Config
	cfg.Start, cfg.Flavor = h.Start, h.Flavor
	if cfg.Env == nil {
		cfg.Env = map[string]string{"agent": h.Agent, "run_id": fmt.Sprint(h.RunID)}
	}
	d, err := NewDir(dir)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(d, &cfg)
	if err != nil {
		d.Close()
		return nil, err
	}
	rep, rerr := hq.ReplayFile(path, &hq.ReplayOptions{Processors: []hq.Processor{w}, Lenient: opt.Lenient})
	w.Close()
	if err := d.Close(); err != nil {
		return rep, err
	}
	return rep, rerr
}
