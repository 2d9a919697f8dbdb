package deploysubset

func pruneBun(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	return nil, refuse("bun.lock", "vx prunes npm and pnpm lockfiles so far")
}
func pruneBerry(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	return nil, refuse("yarn.lock", "vx prunes npm and pnpm lockfiles so far")
}
func pruneYarn1(data []byte, ws *pmWorkspace, kept []*pkg, production bool) (*prunedLock, error) {
	return nil, refuse("yarn.lock", "vx prunes npm and pnpm lockfiles so far")
}
