package tools

import "context"

// checkLock is a placeholder until the tool lands.
func (e *Env) checkLock() Tool {
	return Tool{
		Name:        "checkLock",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("checkLock is not built yet")
		},
	}
}
