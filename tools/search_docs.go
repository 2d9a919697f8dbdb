package tools

import "context"

// searchDocs is a placeholder until the tool lands.
func (e *Env) searchDocs() Tool {
	return Tool{
		Name:        "searchDocs",
		Description: "not built yet",
		Annotations: readOnly,
		Handler: func(context.Context, *Call) (any, error) {
			return nil, Refusef("searchDocs is not built yet")
		},
	}
}
