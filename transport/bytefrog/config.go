package bytefrog

// Config is RuntimeAgentConfigurationV1: the agent configuration HQ sends
// in a Configuration message. Field names follow the Java class.
type Config struct {
	RunID              uint8    // id the agent sends in DataHello
	HeartbeatInterval  int32    // ms between heartbeats
	Exclusions         []string // Java regexes matched with lookingAt against internal class names
	Inclusions         []string // same form; an inclusion match overrides the exclusions
	BufferMemoryBudget int32    // bytes for the whole send-buffer pool
	QueueRetryCount    int32    // retries when obtaining a buffer is interrupted
	NumDataSenders     int32    // data connections to open

	// ClassName is the Java class name read from, or to write into, a v1
	// payload. Empty means JavaClassBytefrog.
	ClassName string
}

// Java class names accepted for RuntimeAgentConfigurationV1.
const (
	JavaClassBytefrog  = "com.secdec.bytefrog.common.config.RuntimeAgentConfigurationV1"
	JavaClassCodePulse = "com.codedx.codepulse.agent.common.config.RuntimeAgentConfigurationV1"
	// JavaConfigSUID is the class's serialVersionUID.
	JavaConfigSUID int64 = -4660117618158655806
)

// DefaultConfig returns the original HQ's defaults.
func DefaultConfig() Config {
	return Config{
		HeartbeatInterval:  1000,
		BufferMemoryBudget: 25600,
		QueueRetryCount:    5,
		NumDataSenders:     1,
	}
}
