PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES('schema','1');
CREATE TABLE runs (
		id TEXT PRIMARY KEY,
		started_ms INTEGER NOT NULL,
		finished_ms INTEGER,
		status TEXT NOT NULL,
		exit_code INTEGER,
		pid INTEGER NOT NULL DEFAULT 0,
		host TEXT NOT NULL DEFAULT '',
		args TEXT NOT NULL DEFAULT '[]',
		requested TEXT NOT NULL DEFAULT '[]',
		task_count INTEGER NOT NULL DEFAULT 0,
		concurrency INTEGER NOT NULL DEFAULT 0
	);
INSERT INTO runs VALUES('01jx0000000000000000000001',1780000000000,1780000010000,'failed',1,14688,'fixture','["run","--all"]','["test"]',4,2);
INSERT INTO runs VALUES('01jx0000000000000000000002',1780000060000,1780000070000,'failed',1,14688,'fixture','["run","--all"]','["test"]',4,2);
INSERT INTO runs VALUES('01jx0000000000000000000003',1780000120000,1780000130000,'failed',1,14688,'fixture','["run","--all"]','["test"]',4,2);
INSERT INTO runs VALUES('01jx0000000000000000000004',1780000180000,1780000190000,'ok',0,14688,'fixture','["run","--all"]','["test"]',4,2);
CREATE TABLE executions (
		run_id TEXT NOT NULL,
		task_id TEXT NOT NULL,
		project TEXT NOT NULL,
		task TEXT NOT NULL,
		ord INTEGER NOT NULL,
		status TEXT NOT NULL,
		exit_code INTEGER,
		started_ms INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		user_cpu_ms INTEGER NOT NULL DEFAULT 0,
		sys_cpu_ms INTEGER NOT NULL DEFAULT 0,
		peak_rss INTEGER NOT NULL DEFAULT 0,
		hash TEXT NOT NULL DEFAULT '',
		cache_source TEXT NOT NULL DEFAULT '',
		saved_ms INTEGER NOT NULL DEFAULT 0,
		blocked_by TEXT NOT NULL DEFAULT '',
		timed_out INTEGER NOT NULL DEFAULT 0,
		sandbox_violations TEXT NOT NULL DEFAULT '[]',
		not_ready TEXT NOT NULL DEFAULT '[]',
		log_blob TEXT NOT NULL DEFAULT '',
		log_source TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (run_id, task_id)
	);
INSERT INTO executions VALUES('01jx0000000000000000000001','a#test','a','test',0,'miss',0,1780000000000,100,40,10,1048576,'k1','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000001','b#test','b','test',1,'miss',0,1780000001000,200,40,10,2097152,'k2','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000001','c#build','c','build',2,'miss',0,1780000002000,300,40,10,3145728,'k4','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000001','d#lint','d','lint',3,'failed',1,1780000003000,400,40,10,4194304,'','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000002','a#test','a','test',0,'failed',1,1780000060000,100,40,10,1048576,'k1','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000002','b#test','b','test',1,'failed',1,1780000061000,200,40,10,2097152,'k3','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000002','c#build','c','build',2,'hit',0,1780000062000,300,40,10,3145728,'k4','local',300,'',0,'[]','[]','','cache');
INSERT INTO executions VALUES('01jx0000000000000000000002','d#lint','d','lint',3,'miss',0,1780000063000,400,40,10,4194304,'','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000003','a#test','a','test',0,'miss',0,1780000120000,100,40,10,1048576,'k1','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000003','b#test','b','test',1,'failed',1,1780000121000,200,40,10,2097152,'k3','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000003','c#build','c','build',2,'timedOut',1,1780000122000,300,40,10,3145728,'k4','',0,'',1,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000003','d#lint','d','lint',3,'miss',0,1780000123000,400,40,10,4194304,'k5','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000004','a#test','a','test',0,'miss',0,1780000180000,100,40,10,1048576,'k6','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000004','b#test','b','test',1,'miss',0,1780000181000,200,40,10,2097152,'k7','',0,'',0,'[]','[]','','');
INSERT INTO executions VALUES('01jx0000000000000000000004','c#build','c','build',2,'hit',0,1780000182000,300,40,10,3145728,'k4','local',300,'',0,'[]','[]','','cache');
INSERT INTO executions VALUES('01jx0000000000000000000004','d#lint','d','lint',3,'hit',0,1780000183000,400,40,10,4194304,'k5','local',300,'',0,'[]','[]','','cache');
CREATE TABLE cache_entries (
		hash TEXT PRIMARY KEY,
		task_id TEXT NOT NULL,
		project TEXT NOT NULL,
		command TEXT NOT NULL,
		outputs_blob TEXT NOT NULL DEFAULT '',
		outputs TEXT NOT NULL DEFAULT '[]',
		log_blob TEXT NOT NULL DEFAULT '',
		size INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		exit_code INTEGER NOT NULL DEFAULT 0,
		created_ms INTEGER NOT NULL,
		last_used_ms INTEGER NOT NULL
	);
INSERT INTO cache_entries VALUES('k4','c#build','c','sh build.sh','ob4','[{"path":"dist/c.js","size":10,"mode":420,"hash":"fh"}]','lb4',1000,300,0,1780000000000,1780000180000);
INSERT INTO cache_entries VALUES('k5','d#lint','d','lint','','[]','lb5',20,400,0,1780000060000,1780000180000);
CREATE TABLE manifests (hash TEXT PRIMARY KEY, task_id TEXT NOT NULL, manifest TEXT NOT NULL);
INSERT INTO manifests VALUES('k1','a#test','{"task":"a#test","key":"k1"}');
INSERT INTO manifests VALUES('k2','b#test','{"task":"b#test","key":"k2"}');
INSERT INTO manifests VALUES('k4','c#build','{"task":"c#build","key":"k4"}');
INSERT INTO manifests VALUES('k3','b#test','{"task":"b#test","key":"k3"}');
INSERT INTO manifests VALUES('k5','d#lint','{"task":"d#lint","key":"k5"}');
INSERT INTO manifests VALUES('k6','a#test','{"task":"a#test","key":"k6"}');
INSERT INTO manifests VALUES('k7','b#test','{"task":"b#test","key":"k7"}');
CREATE TABLE file_stats (
		path TEXT PRIMARY KEY,
		size INTEGER NOT NULL,
		mtime_ns INTEGER NOT NULL,
		ctime_ns INTEGER NOT NULL,
		ino INTEGER NOT NULL,
		hash TEXT NOT NULL,
		recorded_ns INTEGER NOT NULL
	);
INSERT INTO file_stats VALUES('a/src/a.ts',12,1780000000000000000,1780000000000000000,42,'fa',1780000001000000000);
CREATE TABLE key_outcomes (
		task_id TEXT NOT NULL,
		hash TEXT NOT NULL,
		passed INTEGER NOT NULL DEFAULT 0,
		failed INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (task_id, hash)
	);
INSERT INTO key_outcomes VALUES('a#test','k1',1,1);
INSERT INTO key_outcomes VALUES('b#test','k2',1,0);
INSERT INTO key_outcomes VALUES('c#build','k4',1,1);
INSERT INTO key_outcomes VALUES('b#test','k3',0,1);
INSERT INTO key_outcomes VALUES('d#lint','k5',1,0);
INSERT INTO key_outcomes VALUES('a#test','k6',1,0);
INSERT INTO key_outcomes VALUES('b#test','k7',1,0);
CREATE INDEX executions_by_task ON executions (task_id, run_id);
CREATE INDEX executions_by_project ON executions (project, run_id);
CREATE INDEX cache_entries_by_task ON cache_entries (task_id, created_ms);
CREATE INDEX executions_by_run ON executions (run_id, status, task, task_id, duration_ms, user_cpu_ms, sys_cpu_ms, peak_rss, sandbox_violations);
CREATE INDEX executions_by_status ON executions (status, started_ms);
CREATE INDEX cache_entries_by_project_size ON cache_entries (project, size);
CREATE TRIGGER key_outcomes_record AFTER INSERT ON executions
		WHEN NEW.hash != '' AND NEW.status IN ('hit', 'miss', 'failed', 'timedOut')
		BEGIN
			INSERT INTO key_outcomes (task_id, hash, passed, failed)
			VALUES (NEW.task_id, NEW.hash, NEW.status IN ('hit', 'miss'), NEW.status IN ('failed', 'timedOut'))
			ON CONFLICT (task_id, hash) DO UPDATE SET passed = max(passed, excluded.passed), failed = max(failed, excluded.failed);
		END;
COMMIT;
