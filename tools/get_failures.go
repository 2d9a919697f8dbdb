package tools

import "context"

// getFailures is a placeholder until the tool lands.
func (e *Env) getFailures() Tool {
	return Tool{
		Name:        "getFailures",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("getFailures is not built yet")
		},
	}
}
