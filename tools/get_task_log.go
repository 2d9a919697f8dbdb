package tools

import "context"

// getTaskLog is a placeholder until the tool lands.
func (e *Env) getTaskLog() Tool {
	return Tool{
		Name:        "getTaskLog",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("getTaskLog is not built yet")
		},
	}
}
