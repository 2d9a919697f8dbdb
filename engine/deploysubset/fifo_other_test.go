//go:build !unix

package deploysubset

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
