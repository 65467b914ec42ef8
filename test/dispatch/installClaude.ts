/**
 * Installs the Claude Code CLI the dispatch tests run (test/helpers/claudeCli.ts), and nothing else.
 * .ci/run calls it before the suites; a test that gets there first installs it itself (same lock).
 */
import { ensureClaude } from '../helpers/claudeCli';

ensureClaude();
