/** What `local/thinker` adds: reasoning (with its summary detail) before an answer. */
export function thoughtsOn(question: string): { reasoning: string; reasoning_details: Record<string, unknown>[]; content: string } {
  const topic = question.trim().slice(0, 200) || 'nothing in particular';
  const reasoning = `The question is about "${topic}". I list what I know, weigh it, and answer briefly.`;
  return {
    reasoning,
    reasoning_details: [{ type: 'reasoning.summary', summary: reasoning, format: 'unknown', index: 0 }],
    content: `Having thought it over: ${topic}`,
  };
}
