/**
 * Cards with a workspace for the review tests before the claim makes them: a real worktree
 * and branch of a test repository (ensureWorktree), the agent's files committed on it, and the card's
 * `workspace` recorded with backlog.setWorkspace through a second Backlog on the hub's PostgreSQL
 * schema (a hub's PGlite admits no second writer). Test code only.
 */
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { Backlog } from '../../core/backlog';
import type { CardWorkspace } from '../../core/protocol';
import { ensureWorktree } from '../../mcp-server/workspaces/worktree';
import { testDatabaseUrl } from './backlog';
import { commitAllFiles, writeFiles } from './workspaceRepo';

/** The Backlog of the schema a hub started with `BATON_PG_SCHEMA=schema` serves (the hub migrated it). */
export function schemaBacklog(schema: string): Promise<Backlog> {
	return Backlog.open({ databaseUrl: testDatabaseUrl, schema });
}

/**
 * Makes card `cardId`'s worktree in `root`, writes and commits `files` there (null deletes), and records
 * the workspace on the card (`host` defaults to this machine). Returns the workspace recorded.
 */
export async function giveWorkspace(
	backlog: Backlog,
	root: string,
	cardId: string,
	files: Record<string, string | Buffer | null>,
	extra: Partial<CardWorkspace> = {},
): Promise<CardWorkspace> {
	const ws = await ensureWorktree({ repo: root, cardId });
	for (const [rel, content] of Object.entries(files)) {
		if (content === null) {
			rmSync(path.join(ws.path, rel));
		} else {
			writeFiles(ws.path, { [rel]: content });
		}
	}
	const head = commitAllFiles(ws.path, `${cardId}: the agent's work`);
	const workspace: CardWorkspace = {
		root,
		path: ws.path,
		branch: ws.branch,
		base: ws.base,
		host: hostname(),
		head,
		...extra,
	};
	await backlog.setWorkspace({ actor: 'test-hub' }, cardId, workspace);
	return workspace;
}
