/**
 * mcp-server/cli/agentsSection.ts, pure: the work-loop section appended or replaced between its markers with the
 * text around it untouched, idempotence, broken markers refused, and the AGENTS.md / CLAUDE.md choice.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	agentsSection,
	chooseInstructionsFile,
	sectionBegin,
	sectionEnd,
	upsertSection,
} from '../../mcp-server/cli/agentsSection';
import { BatonError } from '../../core/errors';

describe('agentsSection', () => {
	it('names the real MCP tools and stays short', () => {
		for (const tool of ['claim', 'heartbeat', 'complete', 'release', 'fail', 'comment', 'reserve', 'show', 'create']) {
			assert.match(agentsSection, new RegExp(`\`${tool}[ \`]`), tool);
		}
		assert.ok(agentsSection.split('\n').length <= 16, `${agentsSection.split('\n').length} lines`);
	});

	it('creates, appends after a blank line, and leaves a current section as it is', () => {
		assert.equal(upsertSection(undefined, 'AGENTS.md'), `${agentsSection}\n`);
		assert.equal(upsertSection('# Repo\n', 'AGENTS.md'), `# Repo\n\n${agentsSection}\n`);
		assert.equal(upsertSection('# Repo', 'AGENTS.md'), `# Repo\n\n${agentsSection}\n`);
		assert.equal(upsertSection('# Repo\n\n', 'AGENTS.md'), `# Repo\n\n${agentsSection}\n`);
		const once = upsertSection('# Repo\n', 'AGENTS.md');
		assert.equal(upsertSection(once, 'AGENTS.md'), once);
	});

	it('replaces an old section in place, text before and after untouched, CRLF kept', () => {
		const old = `# Repo\r\nintro\r\n${sectionBegin}\r\nold advice\r\n${sectionEnd}\r\n## Build\r\nnpm test\r\n`;
		const next = upsertSection(old, 'CLAUDE.md');
		assert.equal(next, `# Repo\r\nintro\r\n${agentsSection.replace(/\n/g, '\r\n')}\r\n## Build\r\nnpm test\r\n`);
		assert.equal(upsertSection(next, 'CLAUDE.md'), next);
	});

	it('refuses broken markers and names the file', () => {
		for (const text of [
			`${sectionBegin}\nno end`,
			`no begin\n${sectionEnd}`,
			`${sectionEnd}\n${sectionBegin}`,
			`${agentsSection}\n${agentsSection}`,
		]) {
			assert.throws(
				() => upsertSection(text, 'AGENTS.md'),
				(e: unknown) => BatonError.is(e, 'invalid_input') && /^AGENTS\.md has \d/.test(e.message),
			);
		}
	});

	it('chooses the file: the one with the section, else CLAUDE.md unless it points to AGENTS.md', () => {
		const table: [string | undefined, string | undefined, string][] = [
			[undefined, undefined, 'AGENTS.md'],
			['# a', undefined, 'AGENTS.md'],
			[undefined, '# c', 'CLAUDE.md'],
			['# a', '# c', 'CLAUDE.md'],
			['# a', 'See @AGENTS.md', 'AGENTS.md'],
			[agentsSection, '# c', 'AGENTS.md'],
			['# a', agentsSection, 'CLAUDE.md'],
			[undefined, `See AGENTS.md\n${agentsSection}`, 'CLAUDE.md'],
		];
		for (const [agents, claude, want] of table) {
			assert.equal(chooseInstructionsFile(agents, claude), want, `${agents} / ${claude}`);
		}
	});
});
