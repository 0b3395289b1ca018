package hce

import (
	"fmt"
	"time"
)

// Config configures a connection of either side. Zero fields mean the
// default; New* functions accept a nil *Config.
type Config struct {
	// MaxPayload caps an envelope's payload, checked before allocating.
	// Default DefaultMaxPayload.
	MaxPayload int
	// MD5 makes outgoing envelopes carry the MD5 of their payload.
	// Incoming envelopes are checked whenever their MD5 flag is set.
	MD5 bool
	// HandshakeTimeout bounds the CONNECT/COMPLETE exchange.
	HandshakeTimeout time.Duration
	// IdleTimeout drops a peer silent for that long; negative disables.
	IdleTimeout time.Duration
	// KeepAlive is the silence after which a keep-alive is sent;
	// negative disables.
	KeepAlive time.Duration
	// WriteTimeout bounds one envelope write.
	WriteTimeout time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxPayload:       DefaultMaxPayload,
		HandshakeTimeout: DefaultHandshakeTimeout,
		IdleTimeout:      DefaultIdleTimeout,
		KeepAlive:        DefaultKeepAlive,
		WriteTimeout:     DefaultWriteTimeout,
	}
}

// withDefaults fills zero fields and verifies.
func (c *Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c == nil {
		return d, nil
	}
	out := *c
	if out.MaxPayload == 0 {
		out.MaxPayload = d.MaxPayload
	}
	if out.HandshakeTimeout == 0 {
		out.HandshakeTimeout = d.HandshakeTimeout
	}
	if out.IdleTimeout == 0 {
		out.IdleTimeout = d.IdleTimeout
	}
	if out.KeepAlive == 0 {
		out.KeepAlive = d.KeepAlive
	}
	if out.WriteTimeout == 0 {
		out.WriteTimeout = d.WriteTimeout
	}
	return out, out.Verify()
}

// Verify checks the ranges.
func (c *Config) Verify() error {
	switch {
	case c.MaxPayload < 0 || c.MaxPayload > 1<<30:
		return fmt.Errorf("%w: MaxPayload %d", ErrBadConfig, c.MaxPayload)
	case c.HandshakeTimeout < 0:
		return fmt.Errorf("%w: HandshakeTimeout %v", ErrBadConfig, c.HandshakeTimeout)
	case c.WriteTimeout < 0:
		return fmt.Errorf("%w: WriteTimeout %v", ErrBadConfig, c.WriteTimeout)
	case c.IdleTimeout > 0 && c.KeepAlive > 0 && c.KeepAlive >= c.IdleTimeout:
		return fmt.Errorf("%w: KeepAlive %v not below IdleTimeout %v", ErrBadConfig, c.KeepAlive, c.IdleTimeout)
	}
	return nil
}
