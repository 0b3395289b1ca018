package lttngagent

import (
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// drain returns the handler calls that arrive until none comes for quiet.
func (h *recHandler) drain(quiet time.Duration) []string {
	var got []string
	for {
		select {
		case s := <-h.calls:
			got = append(got, s)
		case <-time.After(quiet):
			return got
		}
	}
}

// waitNewRegistration waits for a registration after a daemon restart:
// WaitRegistered answers ErrNoDaemon between attempts, so ask again.
func waitNewRegistration(t *testing.T, c *Client) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.WaitRegistered(ctx)
		cancel()
		if err == nil {
			return
		}
		if !errors.Is(err, ErrNoDaemon) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitRegistered: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no registration after the daemon restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRealSessiond drives the client with lttng-sessiond 2.13 and the
// lttng CLI.
func TestRealSessiond(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	sd := testpeers.StartSessiond(t)
	pid := os.Getpid()
	logs := &logSink{}
	newClient := func(h *recHandler) *Client {
		cfg := DefaultConfig()
		cfg.RootPortFile = "" // never touch a system-wide daemon
		cfg.UserPortFile = sd.PortFile
		cfg.RetryDelay = 100 * time.Millisecond
		cfg.Logger = logs.logger()
		return startClient(t, &cfg, h)
	}
	h := newRecHandler("a.b", "a.c")
	c := newClient(h)
	waitRegistered(t, c)

	names, ok := sd.ListedJUL(pid)
	if !ok || !reflect.DeepEqual(names, []string{"a.b", "a.c"}) {
		t.Errorf("lttng list -j for pid %d: listed %v, names %q; want [a.b a.c]", pid, ok, names)
	}
	t.Logf("lttng list -j:\n%s", sd.MustLttng("list", "-j"))
	t.Logf("lttng --mi xml list -j:\n%s", sd.MustLttng("--mi", "xml", "list", "-j"))
	for len(h.calls) > 0 {
		<-h.calls // the LIST calls
	}

	out := sd.MkdirAll("tr")
	sd.MustLttng("--no-sessiond", "create", "t", "--output="+out)
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"enable-event", "-j", "a.b", "-s", "t"},
			`enable a.b ALL -2147483648 "logger_name == \"a.b\"" registered=true`},
		{[]string{"enable-event", "-j", "a.*", "--loglevel=INFO", "-s", "t"},
			`enable a.* RANGE 800 "(logger_name == \"a.*\") && (int_loglevel >= 800)" registered=true`},
		{[]string{"enable-event", "-j", "a.c", "--loglevel-only=SEVERE", "--filter", `msg == "x"`, "-s", "t"},
			`enable a.c SINGLE 1000 "((msg == \"x\") && (logger_name == \"a.c\")) && (int_loglevel == 1000)" registered=true`},
		{[]string{"add-context", "-j", "-t", "$app.myprov:myctx", "-s", "t"},
			"appctx true myprov:myctx"},
		{[]string{"disable-event", "-j", "a.b", "-s", "t"},
			"disable a.b"},
	}
	for _, st := range steps {
		sd.MustLttng(st.args...)
		if got := h.drain(300 * time.Millisecond); !reflect.DeepEqual(got, []string{st.want}) {
			t.Errorf("lttng %s: handler calls %q; want [%s]", strings.Join(st.args, " "), got, st.want)
		}
	}

	// A new agent while the session exists gets the ENABLEs before
	// REG_DONE.
	c.Close()
	h.nextClosed(t)
	h2 := newRecHandler("a.b")
	c2 := newClient(h2)
	waitRegistered(t, c2)
	pre := sortedCopy(h2.drain(300 * time.Millisecond))
	wantPre := []string{
		"appctx true myprov:myctx",
		`enable a.* RANGE 800 "(logger_name == \"a.*\") && (int_loglevel >= 800)" registered=false`,
		`enable a.c SINGLE 1000 "((msg == \"x\") && (logger_name == \"a.c\")) && (int_loglevel == 1000)" registered=false`,
	}
	if !reflect.DeepEqual(pre, wantPre) {
		t.Errorf("calls before REG_DONE %q; want %q", pre, wantPre)
	}

	// destroy disables what is left.
	sd.MustLttng("destroy", "t")
	got := sortedCopy(h2.drain(300 * time.Millisecond))
	wantDestroy := []string{"appctx false myprov:myctx", "disable a.*", "disable a.c"}
	if !reflect.DeepEqual(got, wantDestroy) {
		t.Errorf("destroy: handler calls %q; want %q", got, wantDestroy)
	}

	// SIGTERM: DISABLEs, then EOF; the client reconnects to the restarted
	// daemon and is listed again.
	sd.MustLttng("--no-sessiond", "create", "t2", "--output="+out)
	sd.MustLttng("enable-event", "-j", "a.b", "-s", "t2")
	h2.next(t)
	sd.Stop()
	h2.expect(t, "disable a.b")
	h2.nextClosed(t)
	sd.Start()
	waitNewRegistration(t, c2)
	if names, ok := sd.ListedJUL(pid); !ok || !slices.Equal(names, []string{"a.b"}) {
		t.Errorf("after restart: listed %v, names %q; want [a.b]", ok, names)
	}

	// SIGKILL leaves a stale port file; the client still comes back.
	sd.Kill()
	h2.nextClosed(t)
	sd.Start()
	waitNewRegistration(t, c2)
	if _, ok := sd.ListedJUL(pid); !ok {
		t.Errorf("after kill and restart: pid %d not listed", pid)
	}
	c2.Close()
	checkNoLeak(t)
	t.Logf("client log:\n%s", logs)
}
