package summary

// Memory is the run summary's memory section: the budget the scheduler planned the run's tasks
// into and where it came from (flag, env, config, cgroup or machine; unknown when there was none
// and nothing was held back). Each task's reservation is its reservedBytes.
type Memory struct {
	BudgetBytes int64  `json:"budgetBytes"`
	Source      string `json:"source"`
}
