package agent

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testpeers"
)

// TestFrozenHQ: an HQ that stops reading holds recording calls at most
// stall_timeout; then the run ends with ErrHQStalled, the error hook is
// told once, recording calls return at once and Shutdown finishes quickly.
func TestFrozenHQ(t *testing.T) {
	f := testpeers.NewFrozenHQ(t)
	cfg := testConfig(f.Addr())
	cfg.StallTimeout = 300 * time.Millisecond
	var hooked atomic.Int32
	defer AddErrorHook(func(err error) {
		if errors.Is(err, ErrHQStalled) {
			hooked.Add(1)
		}
	})()
	a, err := Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMethod("t/Frozen.call;1;()V")
	start := time.Now()
	var longest time.Duration
	for n := 0; ; n++ {
		t0 := time.Now()
		m.Enter().Exit()
		longest = max(longest, time.Since(t0))
		if n%1024 == 0 {
			select {
			case <-a.Done():
			default:
				if time.Since(start) > 20*time.Second {
					t.Fatalf("still tracing into a frozen HQ after %v (%d calls)", time.Since(start), n)
				}
				continue
			}
			t.Logf("run ended after %v and %d calls; longest call %v", time.Since(start).Round(time.Millisecond), n, longest.Round(time.Millisecond))
			break
		}
	}
	if err := a.Err(); !errors.Is(err, ErrHQStalled) {
		t.Errorf("Err = %v; want ErrHQStalled", err)
	}
	if longest > cfg.StallTimeout+2*time.Second {
		t.Errorf("a recording call waited %v; want about stall_timeout (%v) at most", longest, cfg.StallTimeout)
	}
	t0 := time.Now()
	for range 100000 {
		m.Enter().Exit()
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("100000 untraced calls took %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t0 = time.Now()
	a.Shutdown(ctx)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("Shutdown took %v after the run had ended", d)
	}
	deadline := time.Now().Add(2 * time.Second)
	for hooked.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := hooked.Load(); n != 1 {
		t.Errorf("error hook told %d times of the stall; want 1", n)
	}
}
