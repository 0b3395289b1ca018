package ctf

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tadpole-trace/tadpole/transport/live"
)

// Dir is a Sink that writes a CTF trace directory: the file "metadata"
// and one file per stream, named by its channel ("run", "thread-7"),
// holding its packets back to back. babeltrace2 DIR reads it. It is not
// safe for concurrent use; the Writer serialises its calls.
type Dir struct {
	path    string
	files   []*os.File
	bufs    []*bufio.Writer
	err     error
	written int64
}

// NewDir creates dir (it must be empty or absent) and returns a sink
// writing into it. Call Close when the Writer is done.
func NewDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(ents) > 0 {
		return nil, fmt.Errorf("ctf: %s is not empty", dir)
	}
	return &Dir{path: dir}, nil
}

func (d *Dir) setErr(err error) {
	if err != nil && d.err == nil {
		d.err = err
	}
}

// AppendMetadata appends to the metadata file.
func (d *Dir) AppendMetadata(tsdl []byte) {
	f, err := os.OpenFile(filepath.Join(d.path, "metadata"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		d.setErr(err)
		return
	}
	_, err = f.Write(tsdl)
	d.setErr(err)
	d.setErr(f.Close())
}

// AddStream creates the stream's file.
func (d *Dir) AddStream(classID uint64, channel string) int {
	f, err := os.Create(filepath.Join(d.path, channel))
	d.setErr(err)
	d.files = append(d.files, f)
	var w *bufio.Writer
	if f != nil {
		w = bufio.NewWriterSize(f, 256<<10)
	}
	d.bufs = append(d.bufs, w)
	return len(d.files) - 1
}

// Publish appends a packet to its stream's file.
func (d *Dir) Publish(s int, idx live.Index, data []byte) error {
	if d.err != nil {
		return d.err
	}
	_, err := d.bufs[s].Write(data)
	d.setErr(err)
	d.written += int64(len(data))
	return d.err
}

// Beacon does nothing: a file has no live viewer.
func (d *Dir) Beacon(int, uint64) {}

// End does nothing; Close flushes.
func (d *Dir) End() {}

// Close flushes and closes every file and returns the first error.
func (d *Dir) Close() error {
	for i, f := range d.files {
		if f == nil {
			continue
		}
		d.setErr(d.bufs[i].Flush())
		d.setErr(f.Close())
	}
	d.files = nil
	return d.err
}

// Written returns the packet bytes written.
func (d *Dir) Written() int64 { return d.written }
