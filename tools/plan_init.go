package tools

import "context"

// planInit is a placeholder until the tool lands.
func (e *Env) planInit() Tool {
	return Tool{
		Name:        "planInit",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("planInit is not built yet")
		},
	}
}
