-- Excerpt of a real opencode 1.18.33 database dump (the `sqlite3 .dump` of a session run against a fake
-- model provider by a public test fixture, "lazyagents-fixture"): the session, message and part tables,
-- their rows as dumped. The dump's other tables (event, project, todo, ...) are left out.
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL
        );
INSERT INTO message VALUES('msg_0f21aff2e001y84CAhBLtC5Dm9','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768250670,1790768251687,'{"role":"user","time":{"created":1790768250670},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_0f21b0104001XDVLEwtN0JiIZk','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251140,1790768251673,'{"parentID":"msg_0f21aff2e001y84CAhBLtC5Dm9","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/proj","root":"/"},"cost":0,"tokens":{"total":128,"input":120,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1790768251140,"completed":1790768251673},"finish":"tool-calls"}');
INSERT INTO message VALUES('msg_0f21b031b0014ZxYbhc4DxjZrb','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251675,1790768251709,'{"parentID":"msg_0f21aff2e001y84CAhBLtC5Dm9","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/proj","root":"/"},"cost":0,"tokens":{"total":156,"input":50,"output":6,"reasoning":0,"cache":{"write":0,"read":100}},"modelID":"fake-model","providerID":"fake","time":{"created":1790768251675,"completed":1790768251709},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL
        );
INSERT INTO part VALUES('prt_0f21aff33001a2Ikz6KYrhKnir','msg_0f21aff2e001y84CAhBLtC5Dm9','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251129,1790768251131,'{"type":"text","text":"\"run echo fixture please\""}');
INSERT INTO part VALUES('prt_0f21b02d3001tOYcQAJkloLqkx','msg_0f21b0104001XDVLEwtN0JiIZk','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251603,1790768251604,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_0f21b02d5001NcGUD0hmNfrPyr','msg_0f21b0104001XDVLEwtN0JiIZk','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251605,1790768251667,'{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"echo fixture"},"output":"fixture\n","metadata":{"output":"fixture\n","exit":0,"truncated":false},"title":"echo fixture","time":{"start":1790768251611,"end":1790768251666}}}');
INSERT INTO part VALUES('prt_0f21b0315001UbHx9JXmviMyiM','msg_0f21b0104001XDVLEwtN0JiIZk','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251669,1790768251670,'{"reason":"tool-calls","type":"step-finish","tokens":{"total":128,"input":120,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part VALUES('prt_0f21b03360013A63H7yUuGZnIK','msg_0f21b031b0014ZxYbhc4DxjZrb','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251702,1790768251702,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_0f21b0337001GtX6vvuhLhelY7','msg_0f21b031b0014ZxYbhc4DxjZrb','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251703,1790768251705,'{"type":"text","text":"The command printed fixture.","time":{"start":1790768251703,"end":1790768251705}}');
INSERT INTO part VALUES('prt_0f21b033a001VTlTYA9mpcWy8P','msg_0f21b031b0014ZxYbhc4DxjZrb','ses_f0de500f8ffeXvsiYJDOg5JtrU',1790768251706,1790768251707,'{"reason":"stop","type":"step-finish","tokens":{"total":156,"input":50,"output":6,"reasoning":0,"cache":{"write":0,"read":100}},"cost":0}');
CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer
        );
INSERT INTO session VALUES('ses_f0de500f8ffeXvsiYJDOg5JtrU','global',NULL,NULL,'sunny-nebula','/work/proj','tmp/lazyagents-fixture-1634861929/work/proj','The command printed fixture.','1.18.33',NULL,0,0,0,NULL,NULL,0.0,170,14,0,100,0,NULL,'[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]','build','{"id":"fake-model","providerID":"fake","variant":"default"}',1790768250632,1790768251721,NULL,NULL);
