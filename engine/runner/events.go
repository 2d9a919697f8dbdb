package runner

import "github.com/vzn/vx/engine/runout"

// Event is one line of the events stream (runout.Event), for the callers that still name it
// here.
type Event = runout.Event
