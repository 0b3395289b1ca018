package testpeers

import "encoding/xml"

// miList is the part of `lttng --mi xml list -j` the tests read.
type miList struct {
	Domains []struct {
		Type string `xml:"type"`
		PIDs []struct {
			ID     int    `xml:"id"`
			Name   string `xml:"name"`
			Events []struct {
				Name string `xml:"name"`
			} `xml:"events>event"`
		} `xml:"pids>pid"`
	} `xml:"output>domains>domain"`
}

// ListedJUL runs `lttng --mi xml list -j` and returns the logger names it
// shows for pid, and whether pid is listed at all.
func (s *Sessiond) ListedJUL(pid int) ([]string, bool) {
	s.t.Helper()
	out := s.MustLttng("--mi", "xml", "list", "-j")
	var l miList
	if err := xml.Unmarshal([]byte(out), &l); err != nil {
		s.t.Fatalf("lttng --mi xml list -j: %v\n%s", err, out)
	}
	for _, d := range l.Domains {
		for _, p := range d.PIDs {
			if d.Type == "JUL" && p.ID == pid {
				var names []string
				for _, e := range p.Events {
					names = append(names, e.Name)
				}
				return names, true
			}
		}
	}
	return nil, false
}
