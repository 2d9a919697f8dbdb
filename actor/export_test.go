package actor

// CallEvent is one transition of a call, as tests observe it: the call's id as
// sent, and the phase it entered (queued, running, cancelled, answered,
// withdrawn, done).
type CallEvent struct {
	ID    string
	Phase string
}

// ObserveCalls makes the server cfg configures call f on every transition of a
// call, as it happens. f runs with the server's state locked: it must return at
// once and not call into the server.
func ObserveCalls(cfg *Config, f func(CallEvent)) {
	cfg.observe = func(e callEvent) { f(CallEvent{ID: e.id, Phase: e.phase.String()}) }
}
