package tools

import "context"

// whyDidThisRerun is a placeholder until the tool lands.
func (e *Env) whyDidThisRerun() Tool {
	return Tool{
		Name:        "whyDidThisRerun",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("whyDidThisRerun is not built yet")
		},
	}
}
