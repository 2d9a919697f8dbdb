package resources

// Memory is the machine's memory as vx info reports it: what vx's tasks may use (the cgroup's
// limit when that is lower than the machine's RAM), the machine's RAM, and the cgroup's limit
// when it binds (nil otherwise).
func Memory() (usable, total int64, cgroupLimit *int64, err error) {
	if total, err = totalMemoryBytes(); err != nil {
		return 0, 0, nil, err
	}
	usable, fromCgroup, err := availableMemoryBytes()
	if err != nil {
		return 0, 0, nil, err
	}
	if fromCgroup {
		cgroupLimit = &usable
	}
	return usable, total, cgroupLimit, nil
}
