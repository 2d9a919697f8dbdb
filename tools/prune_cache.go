package tools

import "context"

// pruneCache is a placeholder until the tool lands.
func (e *Env) pruneCache() Tool {
	return Tool{
		Name:        "pruneCache",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("pruneCache is not built yet")
		},
	}
}
