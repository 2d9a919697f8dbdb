package tools

import "context"

// runTasks is a placeholder until the tool lands.
func (e *Env) runTasks() Tool {
	return Tool{
		Name:        "runTasks",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("runTasks is not built yet")
		},
	}
}
