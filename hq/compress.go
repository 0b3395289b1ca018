package hq

import (
	"bufio"
	"fmt"
	"io"
	"runtime"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Compression is the layout a trace file is written in. The file name
// extension says which (Ext), and so do the file's first bytes, which is
// what NewTraceReader goes by:
//
//	columns "TPHQ" 00 02: tadpole's columnar layout (docs/tracefile.md)
//	S2      FF 06 00 00 "S2sTwO" (or "sNaPpY": a Snappy framed stream)
//	zstd    28 B5 2F FD
//	none    "TPHQ" 00 01, the trace header itself
//
// The default is columns: events in per-thread columns under zstd, 10× and
// more smaller than the Bytefrog bytes. The other three keep the Bytefrog
// bytes as they were read (format 1), in an S2 or zstd stream or as they
// are: S2 is 2× smaller, zstd 2.7× (BenchmarkTraceFile, which writes and
// replays the same events in each layout; docs/benchmarks.md).
type Compression uint8

const (
	CompressS2   Compression = iota // S2 framed stream of records
	CompressZstd                    // one zstd stream
	CompressNone                    // the records as they are
	// CompressColumns is tadpole's own layout: events in per-thread
	// columns, in zstd blocks (TraceFormatColumns, docs/tracefile.md).
	CompressColumns
)

// traceCodec describes one Compression: its name, how trace files written
// with it end, and how to open a writer and a reader for it.
type traceCodec struct {
	name  string
	ext   string // after TraceExt
	magic []string
	// newWriter returns the compressing writer over w; its Close flushes
	// but does not close w.
	newWriter func(w io.Writer) (io.WriteCloser, error)
	// newReader returns the decompressing reader over r and what must be
	// called when it is no longer used.
	newReader func(r io.Reader) (io.Reader, func(), error)
}

// Stream identifiers at the start of each compressed stream.
const (
	zstdMagic      = "\x28\xb5\x2f\xfd"
	s2Magic        = "\xff\x06\x00\x00S2sTwO"
	snappyMagic    = "\xff\x06\x00\x00sNaPpY"
	maxMagicSize   = len(s2Magic)
	readBufferSize = 64 << 10 // buffer of a TraceReader (and of an uncompressed writer)
)

const (
	// traceBlock is the S2 block: a block is compressed on its own, and
	// blocks of 64 KiB to 4 MiB gave the same ratio within 6 % on trace
	// data, those up to 512 KiB faster (they stay in the CPU cache).
	traceBlock = 256 << 10
	// traceEncoders is how many S2 blocks of a trace file may be compressed
	// at once: with two, the trace writer only copies records into blocks
	// and the compression of a block overlaps with the next one's, which
	// gave BenchmarkIngest 10–20 % more events/s on two cores than one
	// encoder in the writer's own goroutine. Fewer when GOMAXPROCS is
	// lower.
	traceEncoders = 2
	// maxTraceBlock bounds the S2 block a trace file may declare (the
	// format's own maximum); the reader checks it before allocating.
	maxTraceBlock = 4 << 20
)

var traceCodecs = [...]traceCodec{
	CompressS2: {
		name: "s2", ext: ".s2", magic: []string{s2Magic, snappyMagic},
		newWriter: func(w io.Writer) (io.WriteCloser, error) {
			enc := min(traceEncoders, runtime.GOMAXPROCS(0))
			return s2.NewWriter(w, s2.WriterConcurrency(enc), s2.WriterBlockSize(traceBlock)), nil
		},
		newReader: func(r io.Reader) (io.Reader, func(), error) {
			return s2.NewReader(r, s2.ReaderMaxBlockSize(maxTraceBlock), s2.ReaderAllocBlock(traceBlock)), nil, nil
		},
	},
	CompressZstd: {
		name: "zstd", ext: ".zst", magic: []string{zstdMagic},
		newWriter: func(w io.Writer) (io.WriteCloser, error) {
			// With concurrency, a zstd stream encodes one block while
			// the writer fills the next (10 % more events/s).
			enc := min(traceEncoders, runtime.GOMAXPROCS(0))
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(enc),
				zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(traceWindow))
		},
		newReader: func(r io.Reader) (io.Reader, func(), error) {
			zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(maxTraceWindow))
			if err != nil {
				return nil, nil, err
			}
			return zr, zr.Close, nil
		},
	},
	CompressNone: {
		name: "none", ext: "", magic: []string{TraceMagic},
		newWriter: func(w io.Writer) (io.WriteCloser, error) {
			return flushCloser{bufio.NewWriterSize(w, readBufferSize)}, nil
		},
		newReader: func(r io.Reader) (io.Reader, func(), error) { return r, nil, nil },
	},
	// The columnar file is written by a colEncoder and read by a
	// colDecoder: its blocks carry their own zstd frames.
	CompressColumns: {name: "columns", ext: ".col", magic: []string{columnsMagic}},
}

// columnsMagic starts a columnar trace file: the header's magic and format.
const columnsMagic = TraceMagic + "\x00\x02"

// flushCloser makes a buffered writer's Close flush it.
type flushCloser struct{ *bufio.Writer }

func (f flushCloser) Close() error { return f.Flush() }

func (c Compression) valid() bool { return int(c) < len(traceCodecs) }

func (c Compression) String() string {
	if c.valid() {
		return traceCodecs[c].name
	}
	return fmt.Sprintf("UNKNOWN_COMPRESSION_%d", uint8(c))
}

// Ext returns the file name extension of trace files written with c, e.g.
// ".tphq.s2".
func (c Compression) Ext() string {
	if c.valid() {
		return TraceExt + traceCodecs[c].ext
	}
	return TraceExt
}

// ParseCompression returns the Compression named s: "columns", "s2", "zstd"
// or "none".
func ParseCompression(s string) (Compression, error) {
	for i := range traceCodecs {
		if traceCodecs[i].name == s {
			return Compression(i), nil
		}
	}
	return 0, fmt.Errorf("%w: compression %q (want columns, s2, zstd or none)", ErrConfig, s)
}

// detectCompression tells the stream by its first bytes, the longest
// magic that matches.
func detectCompression(head []byte) (Compression, bool) {
	best, found, size := Compression(0), false, 0
	for i := range traceCodecs {
		for _, m := range traceCodecs[i].magic {
			if len(head) >= len(m) && string(head[:len(m)]) == m && len(m) > size {
				best, found, size = Compression(i), true, len(m)
			}
		}
	}
	return best, found
}

// countingReader counts the bytes read from a trace file and notes its
// end, so that an error inside the stream can say where the file stopped.
type countingReader struct {
	r   io.Reader
	n   int64
	eof bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// streamReader names the decompressor in its errors and tells a stream cut
// short apart from a damaged one.
type streamReader struct {
	r   io.Reader
	src *countingReader
	c   Compression
}

func (s *streamReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if s.src.eof {
		return n, fmt.Errorf("%v stream cut short: the file ends at byte %d inside a compressed block (truncated?): %w",
			s.c, s.src.n, err)
	}
	return n, fmt.Errorf("%v stream damaged before byte %d: %w", s.c, s.src.n, err)
}
