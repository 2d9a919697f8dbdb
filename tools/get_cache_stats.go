package tools

import "context"

// getCacheStats is a placeholder until the tool lands.
func (e *Env) getCacheStats() Tool {
	return Tool{
		Name:        "getCacheStats",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("getCacheStats is not built yet")
		},
	}
}
