package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tadpole-trace/tadpole/hq"
	"github.com/tadpole-trace/tadpole/hq/web"
)

// An HQ with its live page: Hook before hq.New, then Listen on loopback.
func Example() {
	page, err := web.New(nil)
	if err != nil {
		panic(err)
	}
	defer page.Close()
	cfg := hq.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	page.Hook(cfg) // every run of this HQ shows on the page
	srv, err := hq.New(cfg)
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	if err := page.Listen("127.0.0.1:0"); err != nil {
		panic(err)
	}

	resp, err := http.Get(page.URL() + "api/runs")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var list struct{ Runs []web.RunInfo }
	json.NewDecoder(resp.Body).Decode(&list)
	fmt.Println(resp.Status, len(list.Runs), "runs")

	// Beyond loopback only when allowed.
	other, _ := web.New(nil)
	defer other.Close()
	fmt.Println(errors.Is(other.Listen("0.0.0.0:8080"), web.ErrNotLoopback))
	// Output:
	// 200 OK 0 runs
	// true
}
