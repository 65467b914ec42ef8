/**
 * server.json, Baton's entry for the official MCP registry, checked without network:
 * against the registry's own schema (vendored in test/fixtures/server.schema.json; where it came from
 * is in test/fixtures/README.md), and against package.json and the code it describes (name, version, the environment
 * variables the program reads). The schema is JSON Schema draft-07 (its `$schema`), so the draft-07
 * Ajv class validates it; formats (uri) come from ajv-formats.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import Ajv from 'ajv';
import addFormats from 'ajv-formats';

import { repoRoot } from '../helpers/mcp';

interface ServerJson {
	$schema: string;
	name: string;
	version: string;
	packages: {
		registryType: string;
		identifier: string;
		version: string;
		transport: { type: string };
		packageArguments?: { type: string; value?: string }[];
		environmentVariables?: { name: string }[];
	}[];
}

const readJson = (path: string): unknown => JSON.parse(readFileSync(join(repoRoot, path), 'utf8'));
const server = readJson('server.json') as ServerJson;
const schema = readJson('test/fixtures/server.schema.json') as { $id: string };
const packageJson = readJson('package.json') as {
	name: string;
	version: string;
	mcpName: string;
	bin: Record<string, string>;
};

/** The registry's schema compiled with Ajv's default strictness: draft-07, formats checked. */
function validator(): ReturnType<Ajv['compile']> {
	const ajv = new Ajv({ allErrors: true });
	addFormats(ajv);
	// An OpenAPI annotation the generated schema carries; it validates nothing.
	ajv.addKeyword('example');
	return ajv.compile(schema);
}

function sourcesUnder(dir: string): string[] {
	return readdirSync(join(repoRoot, dir), { withFileTypes: true, recursive: true })
		.filter(e => e.isFile() && e.name.endsWith('.ts'))
		.map(e => readFileSync(join(e.parentPath, e.name), 'utf8'));
}

describe('server.json for the MCP registry', () => {
	it('names the vendored schema and validates against it', () => {
		assert.equal(server.$schema, schema.$id);
		const validate = validator();
		assert.equal(validate(server), true, JSON.stringify(validate.errors, null, 2));
	});

	it('the schema rejects what the registry rejects (the validator is not vacuous)', () => {
		const validate = validator();
		const pkg = server.packages[0]!;
		const bad: unknown[] = [
			{ ...server, name: 'baton' },
			{ ...server, description: 'x'.repeat(101) },
			{ ...server, packages: [{ ...pkg, version: 'latest' }] },
			{ ...server, packages: [{ ...pkg, packageArguments: [{ type: 'positional' }] }] },
		];
		for (const doc of bad) {
			assert.equal(validate(doc), false, JSON.stringify(doc).slice(0, 200));
		}
	});

	it('agrees with package.json: package name, version, mcpName, and `npx baton-mcp mcp`', () => {
		assert.equal(server.version, packageJson.version);
		assert.equal(server.name, packageJson.mcpName, 'npm ownership check: package.json mcpName = server name');
		assert.equal(server.packages.length, 1);
		const pkg = server.packages[0]!;
		assert.equal(pkg.registryType, 'npm');
		assert.equal(pkg.identifier, packageJson.name);
		assert.equal(pkg.version, packageJson.version);
		assert.equal(pkg.transport.type, 'stdio');
		assert.deepEqual(
			pkg.packageArguments?.map(a => a.value),
			['mcp'],
		);
		// npx runs a package's only bin whatever its name; a second bin would make `npx baton-mcp` ambiguous.
		assert.deepEqual(Object.keys(packageJson.bin), ['baton']);
	});

	it('lists only environment variables the program reads', () => {
		const code = [...sourcesUnder('core'), ...sourcesUnder('mcp-server')].join('\n');
		const names = server.packages[0]!.environmentVariables?.map(e => e.name) ?? [];
		assert.ok(names.includes('BATON_DATA_DIR') && names.includes('DATABASE_URL'));
		for (const name of names) {
			assert.match(
				code,
				new RegExp(`\\benv\\.${name}\\b|'${name}'`),
				`${name} is read somewhere in core/ or mcp-server/`,
			);
		}
	});
});
