package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/tadpole-trace/tadpole/hq"
)

// jsonReports appends each ended run's report to a file as one JSON object
// per line (hq.Report's fields: the result, the counts of every check, the
// findings themselves). A nil *jsonReports writes nothing.
type jsonReports struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error, reported once at close
}

func openJSONReports(path string) (*jsonReports, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-json: %w", err)
	}
	return &jsonReports{f: f}, nil
}

func (j *jsonReports) write(rep *hq.Report) {
	if j == nil {
		return
	}
	b, err := json.Marshal(rep)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err == nil {
		_, err = j.f.Write(append(b, '\n'))
	}
	if j.err == nil {
		j.err = err
	}
}

// close closes the file and returns the first error of any write.
func (j *jsonReports) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.f.Close(); j.err == nil {
		j.err = err
	}
	return j.err
}
