package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/web"
)

// webFlags are the options of the live page.
type webFlags struct {
	addr        string
	allowRemote bool
}

func (w *webFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.addr, "http", "", "serve the live page (runs, rates, pause/suspend/stop, flame graph, timeline, exceptions, markers) on ADDR, e.g. 127.0.0.1:8080; loopback only unless -http-allow-remote")
	fs.BoolVar(&w.allowRemote, "http-allow-remote", false, "let -http listen beyond loopback: the page has no authentication, and whoever reaches it can pause and stop runs")
}

// startWeb hooks the page into cfg's runs and listens; nil when -http is
// not given.
func startWeb(w *webFlags, cfg *hq.Config, stderr io.Writer) (*web.Server, error) {
	if w.addr == "" {
		return nil, nil
	}
	wcfg := web.DefaultConfig()
	wcfg.AllowRemote = w.allowRemote
	s, err := web.New(wcfg)
	if err != nil {
		return nil, err
	}
	if err := s.Listen(w.addr); err != nil {
		s.Close()
		return nil, fmt.Errorf("-http: %w", err)
	}
	s.Hook(cfg)
	fmt.Fprintf(stderr, "tadpole-hq: live page on %s\n", s.URL())
	return s, nil
}

func closeWeb(s *web.Server) {
	if s != nil {
		s.Close()
	}
}
