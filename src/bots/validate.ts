import type { FieldProblem } from '../core/errors.js';
import type { BotNode } from './schemas.js';

/**
 * The whole-graph rules of a bot flow (CONTRACT §16), each problem named by its field:
 * - node ids are unique and `start_node` is one of them;
 * - every `next` and every choice's `target_node` exists;
 * - a `question` has at least one choice, and only a `question` has choices;
 * - a `message` or `collect` has a `next` (it must lead somewhere); `handoff` and `end` have none;
 * - a `collect` names its `field` (`name` or `email`);
 * - no cycle made only of `message` nodes (the bot would talk forever without waiting).
 */
export function flowProblems(startNode: string, nodes: BotNode[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const byId = new Map<string, BotNode>();
  nodes.forEach((node, i) => {
    if (byId.has(node.id)) problems.push({ field: `nodes.${i}.id`, message: `duplicates node ${node.id}` });
    else byId.set(node.id, node);
  });
  if (!byId.has(startNode)) problems.push({ field: 'start_node', message: `names no node (${startNode})` });
  nodes.forEach((node, i) => {
    const at = `nodes.${i}`;
    if (node.type === 'question') {
      if (!node.choices?.length) problems.push({ field: `${at}.choices`, message: 'a question needs at least one choice' });
      node.choices?.forEach((choice, j) => {
        if (!byId.has(choice.target_node)) problems.push({ field: `${at}.choices.${j}.target_node`, message: `names no node (${choice.target_node})` });
      });
    } else if (node.choices?.length) {
      problems.push({ field: `${at}.choices`, message: `only a question has choices (this is a ${node.type})` });
    }
    if (node.type === 'message' || node.type === 'collect') {
      if (!node.next) problems.push({ field: `${at}.next`, message: `is required for a ${node.type}` });
      else if (!byId.has(node.next)) problems.push({ field: `${at}.next`, message: `names no node (${node.next})` });
    } else if (node.next && node.type !== 'question') {
      problems.push({ field: `${at}.next`, message: `a ${node.type} node ends the bot's part and has no next` });
    } else if (node.next && !byId.has(node.next)) {
      problems.push({ field: `${at}.next`, message: `names no node (${node.next})` });
    }
    if (node.type === 'collect' && !node.field) problems.push({ field: `${at}.field`, message: 'is required for a collect (name or email)' });
    if (node.type !== 'collect' && node.field) problems.push({ field: `${at}.field`, message: 'only a collect stores a field' });
    if ((node.type === 'message' || node.type === 'question' || node.type === 'collect') && !node.text.trim()) {
      problems.push({ field: `${at}.text`, message: 'must not be blank' });
    }
  });
  // A loop of message nodes never waits for the visitor.
  for (const node of nodes) {
    if (node.type !== 'message') continue;
    const seen = new Set<string>();
    let current: BotNode | undefined = node;
    while (current && current.type === 'message' && !seen.has(current.id)) {
      seen.add(current.id);
      current = current.next ? byId.get(current.next) : undefined;
    }
    if (current && current.type === 'message' && current.id === node.id) {
      problems.push({ field: `nodes.${nodes.indexOf(node)}.next`, message: 'closes a loop of message nodes that never waits for an answer' });
    }
  }
  return problems;
}
