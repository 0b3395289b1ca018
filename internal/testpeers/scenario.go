package testpeers

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// TwoSessions is the LTTng recording scenario of the C, Go and JVM tests:
// once `lttng list -j` shows loggers alpha and beta of the host p, session
// s1 enables alpha (every level) and disables it after p's phase p1;
// session s2 enables beta from JUL_SEVERE up and alpha under the filter
// msg == "*warn*", for both phases p1 and p2. It returns the events each
// session recorded (lttng view), and destroys both sessions.
func (s *Sessiond) TwoSessions(t testing.TB, p *Emitter, alpha, beta string, wait time.Duration) (s1, s2 []LTTngEvent) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		names, ok := s.ListedJUL(p.PID())
		if ok && slices.Contains(names, alpha) && slices.Contains(names, beta) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lttng list -j: %s and %s of pid %d not listed within %v (listed: %q)", alpha, beta, p.PID(),
				wait, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.MustLttng("--no-sessiond", "create", "s1", "--output="+s.MkdirAll("s1"))
	s.MustLttng("enable-event", "-j", alpha, "-s", "s1")
	s.MustLttng("start", "s1")
	s.MustLttng("--no-sessiond", "create", "s2", "--output="+s.MkdirAll("s2"))
	s.MustLttng("enable-event", "-j", beta, "--loglevel=JUL_SEVERE", "-s", "s2")
	s.MustLttng("enable-event", "-j", alpha, "--filter", `msg == "*warn*"`, "-s", "s2")
	s.MustLttng("start", "s2")
	p.Emit(t, "p1")
	s.MustLttng("disable-event", "-j", alpha, "-s", "s1")
	p.Emit(t, "p2")
	s.MustLttng("stop", "s1")
	s.MustLttng("stop", "s2")
	s1, s2 = ViewSession(t, s, "s1"), ViewSession(t, s, "s2")
	s.MustLttng("destroy", "s1")
	s.MustLttng("destroy", "s2")
	return s1, s2
}

// TwoSessionsWant is what each session of TwoSessions holds, in order, from
// an emitter that logs, per phase P and i in 0..2, "P info i" and "P warn i"
// on alpha and "P binfo i" (INFO) and "P severe i" (SEVERE) on beta, as the
// C and Go recording programs do; TwoSessionsLevels are those records' JUL
// levels by their second word.
func TwoSessionsWant() (s1, s2 []string) {
	for i := 0; i < 3; i++ {
		n := strconv.Itoa(i)
		s1 = append(s1, "p1 info "+n, "p1 warn "+n)
	}
	for _, p := range []string{"p1", "p2"} {
		for i := 0; i < 3; i++ {
			n := strconv.Itoa(i)
			s2 = append(s2, p+" warn "+n, p+" severe "+n)
		}
	}
	return s1, s2
}

// TwoSessionsLevels: see TwoSessionsWant.
var TwoSessionsLevels = map[string]string{"info": "800", "warn": "900", "severe": "1000"}
