package bytefrog

import "fmt"

// AppendJavaConfig appends c as a Java-serialized RuntimeAgentConfigurationV1
// (the v1 Configuration payload, without the i32 length prefix).
func AppendJavaConfig(b []byte, c *Config) []byte { return b }

// ParseJavaConfig parses a v1 Configuration payload.
func ParseJavaConfig(b []byte) (Config, error) {
	return Config{}, fmt.Errorf("%w: java serialization not available", ErrBadConfig)
}

// AppendJSONConfig appends c as the v2+ JSON payload (without the u16 prefix).
func AppendJSONConfig(b []byte, c *Config) ([]byte, error) { return b, nil }

// ParseJSONConfig parses a v2+ Configuration payload (modified UTF-8 JSON).
func ParseJSONConfig(b []byte) (Config, error) {
	return Config{}, fmt.Errorf("%w: json not available", ErrBadConfig)
}
