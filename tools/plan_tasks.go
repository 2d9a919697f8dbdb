package tools

import "context"

// planTasks is a placeholder until the tool lands.
func (e *Env) planTasks() Tool {
	return Tool{
		Name:        "planTasks",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("planTasks is not built yet")
		},
	}
}
