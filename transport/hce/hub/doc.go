// Package hub is an HCE hub (the seed's "Hyades Collector Engine"): it
// accepts clients and agents over TCP and named pipes, gives each
// connection an ID, routes command blocks by destination ID and serves the
// Agent Manager interface (queries, references, attachment with an
// exclusive lock, registration, event listeners). It knows nothing of what
// agents do: it imports only the standard library and package hce.
//
// Rules (the wire values are tabled in package hce):
//
//   - A command to hce.EngineID is an Agent Manager command. A command to
//     another ID is forwarded only from a client attached to that agent, or
//     from an agent to a client attached to it, and only on an interface the
//     agent registered (if it named any). Anything else is answered with
//     CID_COMMAND_REJECTED.
//   - A block whose source is not the sender's connection ID is rejected
//     (ID_MISMATCH).
//   - Agents launched elsewhere hold an implicit reference to themselves:
//     the hub counts clients' references, never shuts an agent down, and
//     forgets an agent when its connection closes; then listeners get
//     EID_AGENT_DEREGISTERED (if it was registered), holders of a
//     reference or an attachment that listen to nothing get it with
//     context 0, and every reference and attachment to it is freed.
//   - A client that vanishes is detached (EID_AGENT_AVAILABLE if it held an
//     exclusive lock) and its references and listeners are freed.
package hub
