package tools

import "context"

// getRunHistory is a placeholder until the tool lands.
func (e *Env) getRunHistory() Tool {
	return Tool{
		Name:        "getRunHistory",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("getRunHistory is not built yet")
		},
	}
}
