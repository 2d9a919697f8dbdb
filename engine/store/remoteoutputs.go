package store

// An entry whose outputs stayed remote (vx run --download=minimal or outputs-of-requested, for a
// task that ran on a REAPI engine or was served by a REAPI remote cache) keeps its listing —
// every output's path, size, mode, content hash and link target — and its log blob here, but no
// outputs archive: each file's content is held, under the hash its listing gives, by the CAS of
// the REAPI server that made or served it. The entry knows it (OutputsRemote): it is never read as
// a local hit that restores nothing. A run that wants its outputs fetches every file's blob by
// its hash (checked as it is written), packs the archive a local entry names, and replaces the
// entry with that one (WithOutputs) before restoring it; a run that cannot fetch them misses.
// Nothing here names a blob the local blob store lacks without saying so, so a crash at any step
// leaves either the remote-only entry or the whole one, and prune and gc, which remove only blobs
// that no entry names, never look for the remote ones.

// OutputsRemote reports whether e's outputs stayed remote: its listing names outputs but no
// outputs archive is kept locally.
func (e Entry) OutputsRemote() bool { return e.OutputsBlob == "" && len(e.Outputs) > 0 }

// RemoteFiles answers the outputs of a remote-only entry whose content must be fetched: its files
// (not its links), each once by hash.
func (e Entry) RemoteFiles() []OutputFile {
	seen := map[string]bool{}
	var out []OutputFile
	for _, f := range e.Outputs {
		if f.Link != "" || f.Hash == "" || seen[f.Hash] {
			continue
		}
		seen[f.Hash] = true
		out = append(out, f)
	}
	return out
}

// WithOutputs is e with its outputs kept locally: the archive blob (already in the local blob
// store) of archiveSize bytes, added to the entry's size.
func (e Entry) WithOutputs(archiveBlob string, archiveSize int64) Entry {
	e.OutputsBlob = archiveBlob
	e.Size += archiveSize
	return e
}
