/**
 * What a user of the openai CLI (`openai api RESOURCE.METHOD …`) types, and router's way instead: its commands as
 * router's commands, its `-g ROLE CONTENT` and other flags as router chat's, the resources the service has none of
 * (files, fine-tuning, a batch's cancel) said so. test/inprocess/openai-cli-words.test.ts runs each command of it.
 */

const CHAT = 'router chat --model ID "TEXT", -s TEXT a system message, streamed unless --no-stream';
const NO_FILES = 'the service has no files to upload: router batch create FILE sends the JSONL itself; a file for a model goes with router chat -a FILE';
const NO_TUNING = 'the service does no fine-tuning; router models lists the models it has';
const NO_CANCEL = 'the service has no way to cancel a batch: it runs to its end or expires after 24h, and what ran is charged; Ctrl-C stops only the watching';

/** The openai CLI's `api` commands (and those of the API it has no command for), by their name there. */
const METHODS: Record<string, string> = {
  'chat.completions.create': CHAT,
  'completions.create': `the service has chat, not legacy completions: ${CHAT}`,
  'responses.create': 'router responses --model ID "TEXT"',
  'embeddings.create': 'router embed --model ID "TEXT"',
  'audio.speech.create': 'router speak --model ID --voice ID "TEXT" > out.mp3',
  'audio.transcriptions.create': 'the service has no transcription endpoint: a model that takes audio hears it in chat: router chat --model ID -a clip.mp3 "transcribe this"',
  'audio.translations.create': 'the service has no translation endpoint: a model that takes audio hears it in chat: router chat --model ID -a clip.mp3 "translate this into English"',
  'images.generate': 'images come from chat: router chat --model ID --modalities text,image --save-images DIR "TEXT"',
  'images.edit': 'images come from chat: router chat --model ID -a photo.png --modalities text,image --save-images DIR "TEXT"',
  'images.create_variation': 'images come from chat: router chat --model ID -a photo.png --modalities text,image --save-images DIR "a variation"',
  'models.list': 'router models; words narrow it: router models llama',
  'models.retrieve': 'router models show ID',
  'models.delete': "the service's models are not yours to delete: router models lists them",
  'files.create': NO_FILES,
  'files.retrieve': NO_FILES,
  'files.list': NO_FILES,
  'files.delete': NO_FILES,
  'files.content': `${NO_FILES}; a batch's results: router batch get ID --results FILE`,
  'batches.create': 'router batch create FILE --model ID: the JSONL itself, no upload first; --watch follows it',
  'batches.retrieve': 'router batch get ID; --watch follows it, --results FILE writes its results',
  'batches.list': 'router batch list',
  'batches.cancel': NO_CANCEL,
  'moderations.create': 'the service has no moderation endpoint',
};

/** A resource of the API alone (`router files`), by the words it may be typed as. */
const RESOURCES: Record<string, string> = {
  files: NO_FILES,
  images: METHODS['images.generate']!,
  image: METHODS['images.generate']!,
  audio: 'speech is router speak --model ID --voice ID "TEXT" > out.mp3; audio to a model goes with router chat -a clip.mp3',
  fine_tuning: NO_TUNING,
  'fine-tuning': NO_TUNING,
  fine_tunes: NO_TUNING,
  'fine-tunes': NO_TUNING,
  finetune: NO_TUNING,
  completions: METHODS['completions.create']!,
  moderations: METHODS['moderations.create']!,
};

/** `router batch WORD`: the openai CLI's and API's words for a batch's subcommands. */
const BATCH_WORDS: Record<string, string> = {
  retrieve: METHODS['batches.retrieve']!,
  status: 'router batch get ID; --watch follows it',
  wait: 'router batch get ID --watch',
  cancel: NO_CANCEL,
  delete: 'the service keeps a batch 30 days and deletes none sooner',
  download: 'router batch get ID --results FILE',
};

/** The openai CLI's `chat.completions.create` flags, given to router chat (or to router api after its command). */
const CHAT_FLAGS: Record<string, string> = {
  '-g': "openai's -g ROLE CONTENT is the prompt here: router chat \"CONTENT\"; -s TEXT is a system message, -c goes on with the last conversation",
  '--message': "openai's --message ROLE CONTENT is the prompt here: router chat \"CONTENT\"; -s TEXT is a system message",
  '-M': "openai's -M is --max-tokens here",
  '-P': "openai's -P is --top-p here",
  '--n': 'one answer a call here: several calls, or router batch run FILE',
};

/** The flags of the openai CLI's `api` commands, given to router api after one of them. */
const API_FLAGS = ['-m', '--model', '-g', '--message', '-M', '--max-tokens', '-t', '--temperature', '-P', '--top_p', '-n', '--n', '--stream', '--stop',
  '-p', '--prompt', '--file', '--purpose', '--id', '-s', '--size', '--num-images', '--response-format', '--language', '--voice', '--suffix'];

/** An openai CLI command word: `chat.completions.create`, `batches.cancel` (its resource one of the API's). */
export function openaiMethod(word: string): string | undefined {
  if (!/^[a-z_]+(\.[a-z_]+)+$/.test(word)) return undefined;
  const said = METHODS[word];
  if (said) return `openai's ${word}${said.startsWith('router ') ? ' is ' : ': '}${said}`;
  // Another method of a resource the service lacks (files.upload, fine_tuning.jobs.list).
  const resource = RESOURCES[word.split('.')[0]!];
  return resource && `openai's ${word}: ${resource}`;
}

/** Where to go instead of an openai CLI word given to `path` (a command path such as "router batch"); undefined if none. */
export function openaiHint(path: string, word: string): string | undefined {
  if (path === 'router') return openaiMethod(word) ?? RESOURCES[word];
  if (path === 'router batch') return BATCH_WORDS[word];
  if (path === 'router api' && API_FLAGS.includes(word)) return `router api sends a path and fields, as router api /v1/models; openai's api RESOURCE.METHOD is a command here: chat.completions.create is ${CHAT}`;
  if (path === 'router chat') return CHAT_FLAGS[word];
  if (path === 'router speak' && word === '--response-format') return "the audio's format is --format here, mp3 or pcm, or -o FILE's extension";
  return undefined;
}
