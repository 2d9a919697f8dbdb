package cache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// A restore journals every path it creates or replaces, so that a rejected, cancelled or killed
// restore leaves the outputs as they were. The journal is a file of .vx/restore/, written ahead of
// each change it records (so that a kill of vx loses none of it) and synced with its folder when it
// is made; its owner holds an advisory lock on it while the restore runs. One line a record, each
// path quoted (strconv.Quote) and root-relative:
//
//	vx-restore-journal 1 "<workspace root>"
//	c "<path>"             the restore is about to create path (a file, a link or a folder)
//	n "<path>"             ... and did not: something was there already
//	r "<path>" "<aside>"   the restore moved path aside (same folder) to replace or remove it
//	ok                     the restore succeeded: only the asides are left to delete
//
// Rolling back undoes the records newest first: a created path is removed (a created folder with
// everything in it, all of which the restore made), a replaced one is put back from its aside.
// A path in a folder the restore created is not journaled: removing the folder removes it.

// journalMagic starts every journal.
const journalMagic = "vx-restore-journal 1 "

// journalDirName is the folder of the state folder that holds the journals.
const journalDirName = "restore"

// journal is one restore's journal. Its file is made on the first change, so that a restore that
// changes nothing (a full hit) writes none; one that cannot make it changes nothing and fails.
type journal struct {
	dir, root string // the journals' folder, the workspace root
	name      string // the journal's file name in dir
	f         *os.File
	unlock    func()
	asides    map[string]bool // the asides made
	fresh     map[string]bool // folders the restore created
	seq       int64
	err       error
	// afterChange, when set, is called after each output is written (a test's hook).
	afterChange func(rel string)
}

// newJournal answers the journal of one restore of task taskID; its file is made on the first
// change.
func newJournal(stateDir, root, taskID string) *journal {
	sum := sha256.Sum256([]byte(root + "\x00" + taskID))
	return &journal{dir: filepath.Join(stateDir, journalDirName), root: root,
		name:   hex.EncodeToString(sum[:8]) + "-" + strconv.Itoa(os.Getpid()) + ".journal",
		asides: map[string]bool{}, fresh: map[string]bool{}}
}

// open makes the journal's file and locks it, once.
func (j *journal) open() error {
	if j.f != nil || j.err != nil {
		return j.err
	}
	j.err = func() error {
		if err := os.MkdirAll(j.dir, 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(j.dir, j.name), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		unlock, ok := tryLock(f)
		if !ok {
			f.Close()
			return errors.New("journal held by another process")
		}
		// Not synced: a killed vx's writes are the kernel's and the next run reads them, which is
		// the crash the journal is for; against a power cut nothing of a restore is synced (its
		// outputs no more than its journal), and two syncs a task were a fifth of a restore.
		_, err = f.WriteString(journalMagic + strconv.Quote(j.root) + "\n")
		if err != nil {
			unlock()
			f.Close()
			return err
		}
		j.f, j.unlock = f, unlock
		return nil
	}()
	if j.err != nil {
		j.err = fmt.Errorf("journal the restore: %w", j.err)
	}
	return j.err
}

// record appends one record, before the change it names.
func (j *journal) record(line string) error {
	if err := j.open(); err != nil {
		return err
	}
	if _, err := j.f.WriteString(line + "\n"); err != nil {
		return fmt.Errorf("journal the restore: %w", err)
	}
	return nil
}

// inFresh reports whether rel lies in a folder the restore created: no record is needed for it.
func (j *journal) inFresh(rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if j.fresh[d] {
			return true
		}
	}
	return false
}

// creating records that the restore is about to create rel; isDir marks a folder.
func (j *journal) creating(rel string, isDir bool) error {
	if j.inFresh(rel) {
		if isDir {
			j.fresh[rel] = true
		}
		return nil
	}
	if err := j.record("c " + strconv.Quote(rel)); err != nil {
		return err
	}
	if isDir {
		j.fresh[rel] = true
	}
	return nil
}

// notCreated records that rel, announced by creating, was there already.
func (j *journal) notCreated(rel string, isDir bool) error {
	if isDir {
		delete(j.fresh, rel)
	}
	if j.inFresh(rel) {
		return nil
	}
	return j.record("n " + strconv.Quote(rel))
}

// aside names the aside of rel (in its folder) and records the move, before it is made.
func (j *journal) aside(rel string) (string, error) {
	j.seq++
	name := ".vx-aside-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(j.seq, 10)
	aside := path.Join(path.Dir(rel), name)
	if j.inFresh(rel) {
		return aside, nil // nothing of the user's: the folder goes whole on a rollback
	}
	if err := j.record("r " + strconv.Quote(rel) + " " + strconv.Quote(aside)); err != nil {
		return "", err
	}
	j.asides[aside] = true
	return aside, nil
}

// changed says that the output rel was written.
func (j *journal) changed(rel string) {
	if j.afterChange != nil {
		j.afterChange(rel)
	}
}

// isAside reports whether rel is one of this restore's asides.
func (j *journal) isAside(rel string) bool { return j.asides[rel] }

// commit ends a restore that succeeded: the asides are deleted and the journal removed.
func (j *journal) commit() {
	if j.f == nil {
		return
	}
	_ = j.record("ok")
	if len(j.asides) > 0 {
		finishJournal(j.root, j.records())
	}
	j.close(true)
}

// rollback undoes the restore: every path it created is removed and every path it replaced is put
// back. It answers the first error, having tried every record.
func (j *journal) rollback() error {
	if j.f == nil {
		return nil
	}
	err := undo(j.root, j.records())
	j.close(err == nil)
	return err
}

// records answers the journal's records as read back from its file.
func (j *journal) records() []journalRecord {
	recs, _, _ := readJournal(filepath.Join(j.dir, j.name))
	return recs
}

// close releases the journal, removing its file when done.
func (j *journal) close(remove bool) {
	if remove {
		_ = os.Remove(filepath.Join(j.dir, j.name))
	}
	j.unlock()
	j.f.Close()
	j.f = nil
}

// journalRecord is one record of a journal.
type journalRecord struct {
	op          byte // 'c', 'n', 'r' or 'o' (ok)
	path, aside string
}

// readJournal reads a journal's records and the workspace root it names.
func readJournal(file string) (recs []journalRecord, root string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), journalMagic) {
		return nil, "", fmt.Errorf("%s is not a restore journal", file)
	}
	if root, err = strconv.Unquote(strings.TrimPrefix(sc.Text(), journalMagic)); err != nil {
		return nil, "", fmt.Errorf("%s is not a restore journal", file)
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "ok" {
			recs = append(recs, journalRecord{op: 'o'})
			continue
		}
		if len(line) < 3 || line[1] != ' ' {
			break // a record torn by a kill: nothing after it happened
		}
		first, rest, err := unquotePrefix(line[2:])
		if err != nil {
			break
		}
		r := journalRecord{op: line[0], path: first}
		if r.op == 'r' {
			if r.aside, err = strconv.Unquote(strings.TrimPrefix(rest, " ")); err != nil {
				break
			}
		}
		recs = append(recs, r)
	}
	return recs, root, nil
}

// unquotePrefix reads the quoted string that starts s and answers the rest.
func unquotePrefix(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", err
	}
	v, err := strconv.Unquote(q)
	return v, s[len(q):], err
}

// undo rolls the records back, newest first, beneath root.
func undo(root string, recs []journalRecord) error {
	for _, r := range recs {
		if r.op == 'o' {
			finishJournal(root, recs)
			return nil
		}
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("roll the restore back: %w", err)
	}
	defer rt.Close()
	var first error
	keep := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = fmt.Errorf("roll the restore back: %w", err)
		}
	}
	skip := map[int]bool{}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if !clean(r.path) || (r.op == 'r' && !clean(r.aside)) {
			continue
		}
		switch r.op {
		case 'n':
			// The matching creation, the last 'c' of the path before it, did not happen.
			for k := i - 1; k >= 0; k-- {
				if recs[k].op == 'c' && recs[k].path == r.path {
					skip[k] = true
					break
				}
			}
		case 'c':
			if !skip[i] {
				keep(rt.RemoveAll(filepath.FromSlash(r.path)))
			}
		case 'r':
			if _, err := rt.Lstat(filepath.FromSlash(r.aside)); err != nil {
				continue // never moved: nothing to put back
			}
			keep(rt.RemoveAll(filepath.FromSlash(r.path)))
			keep(rt.Rename(filepath.FromSlash(r.aside), filepath.FromSlash(r.path)))
		}
	}
	return first
}

// finishJournal deletes the asides of a restore that succeeded.
func finishJournal(root string, recs []journalRecord) {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return
	}
	defer rt.Close()
	for _, r := range recs {
		if r.op == 'r' && clean(r.aside) {
			_ = rt.RemoveAll(filepath.FromSlash(r.aside))
		}
	}
}

// clean reports whether a journaled path is a clean root-relative one.
func clean(rel string) bool {
	return rel != "" && rel != "." && path.Clean(rel) == rel && !path.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, "../")
}

// recoverJournals rolls back, in the state folder stateDir, the journals of restores beneath root
// whose process ended (SIGKILL, a crash) before it finished: their lock is free. A journal of
// another workspace sharing the state folder is left alone. It answers one line per journal that
// could not be rolled back.
func recoverJournals(stateDir, root string) []string {
	dir := filepath.Join(stateDir, journalDirName)
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var problems []string
	for _, d := range names {
		if !strings.HasSuffix(d.Name(), ".journal") {
			continue
		}
		file := filepath.Join(dir, d.Name())
		f, err := os.OpenFile(file, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		unlock, ok := tryLock(f)
		if !ok {
			f.Close()
			continue // its restore is running
		}
		recs, jroot, err := readJournal(file)
		if err == nil && jroot != root {
			unlock()
			f.Close()
			continue
		}
		if err == nil {
			err = undo(root, recs)
		}
		if err == nil {
			err = os.Remove(file)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("vx: an interrupted restore (%s): %v", file, err))
		}
		unlock()
		f.Close()
	}
	return problems
}
