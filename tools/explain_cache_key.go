package tools

import "context"

// explainCacheKey is a placeholder until the tool lands.
func (e *Env) explainCacheKey() Tool {
	return Tool{
		Name:        "explainCacheKey",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("explainCacheKey is not built yet")
		},
	}
}
