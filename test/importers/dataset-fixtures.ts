import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Small dataset files in the real release shapes, written to a temp dir by the tests (never read from
 * ../shared/data). Each builder returns what it wrote so tests can count against it.
 */

/** A Mem-Gallery dialog file: 2 sessions (3 + 2 rounds), 2 images on D1:2, one missing image, 4 questions. */
export async function writeMemGalleryContext(dir: string, name: string): Promise<string> {
  await mkdir(join(dir, 'dialog'), { recursive: true });
  await mkdir(join(dir, 'image', name), { recursive: true });
  await writeFile(join(dir, 'image', name, 'D1_IMG_001.png'), 'png bytes');
  const file = join(dir, 'dialog', `${name}.json`);
  const data = {
    character_profile: {
      name: 'Marcus',
      persona_summary: 'A science teacher who fixes things himself.',
      traits: ['methodical', 'patient'],
      conversation_style: 'thorough',
    },
    multi_session_dialogues: [
      {
        session_id: 'D1',
        date: '2024-06-06',
        dialogues: [
          { round: 'D1:1', user: 'Cleaning day with the family.', assistant: 'Divide the work!' },
          {
            round: 'D1:2',
            user: 'Here is the list and the cart.',
            assistant: 'Well prepared.',
            image_id: ['D1:IMG_001', 'D1:IMG_002'],
            input_image: [`../image/${name}/D1_IMG_001.png`, `../image/${name}/D1_IMG_002.png`],
            image_caption: ['A handwritten cleaning list.', 'A full shopping cart.'],
          },
          { round: 'D1:3', user: 'Started in the living room.', assistant: 'Good start.' },
        ],
      },
      {
        session_id: 'D2',
        date: '2024-06-14',
        dialogues: [
          { round: 'D2:1', user: 'Bought bamboo charcoal bags.', assistant: 'They absorb moisture.' },
          { round: 'D2:2', user: 'Also white vinegar.', assistant: 'Great disinfectant.' },
        ],
      },
    ],
    'human-annotated QAs': [
      {
        point: 'FR',
        question: 'What did the user buy?',
        answer: 'Charcoal bags and vinegar',
        session_id: ['D2'],
        clue: ['D2:1', 'D2:2'],
      },
      {
        point: 'VS',
        question: 'Which picture shows the cart?',
        answer: 'D1:IMG_002',
        session_id: ['D1'],
        clue: ['D1:2'],
      },
      {
        point: 'AR',
        question: 'Did they use a vacuum?',
        answer: 'Not mentioned.',
        session_id: ['D1'],
        clue: [],
      },
      {
        point: 'TTL',
        question: 'What is shown?',
        answer: 'A list',
        session_id: ['D1'],
        clue: ['D1:2', 'D9:9'],
        question_image: `../image/${name}/QA_IMG_001.png`,
        image_caption: 'A list on paper.',
      },
    ],
  };
  await writeFile(file, JSON.stringify(data));
  return file;
}

/** LoCoMo release shape: an array with one sample, messy evidence, an adversarial question. */
export const locomoSamples = [
  {
    sample_id: 'conv-1',
    conversation: {
      speaker_a: 'Nora',
      speaker_b: 'Ivo',
      session_1_date_time: '9:10 am on 3 March, 2024',
      session_1: [
        { speaker: 'Nora', dia_id: 'D1:1', text: 'The CS101 coursework is due on May 2, right?' },
        {
          speaker: 'Ivo',
          dia_id: 'D1:2',
          text: 'Yes. I pinned the notice above my desk.',
          img_url: ['https://example.invalid/notice.jpg'],
          blip_caption: 'a photo of a printed notice pinned to a cork board',
          query: 'course notice pinned board',
        },
        { speaker: 'Nora', dia_id: 'D1:3', text: 'I will start the essay this weekend.' },
      ],
      session_2_date_time: '6:45 pm on 20 April, 2024',
      session_2: [
        { speaker: 'Ivo', dia_id: 'D2:1', text: 'Did you see the update email?' },
        { speaker: 'Nora', dia_id: 'D2:2', text: 'Moved what?' },
        { speaker: 'Ivo', dia_id: 'D2:3', text: 'The deadline is now May 7 because of the outage.' },
      ],
      session_10_date_time: '8:00 am on 1 May, 2024',
      session_10: [{ speaker: 'Nora', dia_id: 'D10:1', text: 'Essay submitted!' }],
    },
    qa: [
      { question: 'What is the revised deadline?', answer: 'May 7', evidence: ['D2:3'], category: 1 },
      { question: 'Why was it moved?', answer: 'An outage', evidence: ['D2:1; D2:3'], category: 4 },
      { question: 'What happened in session 1?', answer: 'Planning', evidence: ['D1:1-D1:3'], category: 3 },
      {
        question: 'When was it submitted?',
        answer: '1 May 2024',
        evidence: ['D10:1', 'D7:4', 'see above'],
        category: 2,
      },
      { question: 'What did Nora bake?', evidence: ['D1:3'], category: 5, adversarial_answer: 'A cake' },
      { question: 'How many days later?', answer: 5, evidence: ['D1:1', 'D2:3'], category: 2 },
    ],
  },
];

/** The same conversation with the `conversation` keys flattened next to `qa` (one conversation per file). */
export function flattenedLocomo(): Record<string, unknown> {
  const [sample] = locomoSamples;
  return { ...sample!.conversation, qa: sample!.qa };
}

/** REALTALK shape: clean_text, per-message date_time, local img_file. */
export async function writeRealtalk(dir: string): Promise<string> {
  await writeFile(join(dir, 'sunset.jpg'), 'jpeg bytes');
  const file = join(dir, 'Chat_1_Emi_Elise.json');
  await writeFile(
    file,
    JSON.stringify({
      name: { speaker_1: 'Emi', speaker_2: 'Elise' },
      session_1_date_time: '29.12.2023, 22:40:00',
      session_1: [
        {
          speaker: 'Emi',
          dia_id: 'D1:1',
          clean_text: 'Look at this sunset!',
          text: 'Look at this sunset!! :)',
          date_time: '29.12.2023, 22:42:04',
          img_file: 'sunset.jpg',
          blip_caption: 'a sunset over the sea',
        },
        {
          speaker: 'Elise',
          dia_id: 'D1:2',
          clean_text: 'Gorgeous, where is that?',
          date_time: '29.12.2023, 22:43:10',
        },
        {
          speaker: 'Emi',
          dia_id: 'D1:3',
          clean_text: 'Porto, last summer.',
          date_time: 'sometime',
          img_file: ['missing.jpg'],
        },
      ],
      qa: [
        {
          question: 'Where was the sunset photo taken?',
          answer: 'Porto',
          evidence: ['D1:1', 'D1:3'],
          category: 1,
        },
      ],
    }),
  );
  return file;
}

/** An M3Exam persona folder: 2 sessions, images (one missing), per-image and shared descriptions. */
export async function writeM3examPersona(dir: string, persona: string): Promise<string> {
  const root = join(dir, persona);
  await mkdir(join(root, 'images'), { recursive: true });
  for (const name of ['img_1.jpg', 'img_2.jpg', 'img_3.png', 'img_4.jpg']) {
    await writeFile(join(root, 'images', name), `bytes of ${name}`);
  }
  const sessions = [
    {
      session_id: 'D1',
      date: '2023-03-01',
      dialogues: [
        {
          round: 'D1:1',
          user: 'A puppy with parvovirus, photos attached.',
          assistant: 'Fluids, antiemetics, nutrition.',
          img_file: ['img_1.jpg', 'img_2.jpg'],
          img_id: [1, 2],
          img_description: ['An examination ward.', 'A puppy on an IV drip.'],
        },
        { round: 'D1:2', user: 'What about antibiotics?', assistant: 'Broad-spectrum if septic.' },
      ],
    },
    {
      session_id: 'D2',
      date: '2023-03-02',
      dialogues: [
        {
          round: 'D2:1',
          user: 'A rabbit with gut stasis.',
          assistant: 'Hay and fluids.',
          img_file: ['img_3.png', 'img_4.jpg', 'img_5.jpg'],
          img_id: [3, 4, 5],
          img_description: 'A rabbit under veterinary care.',
          is_followup: true,
          followup_of: 'D1:1',
        },
        { round: 'D2:2', user: 'Which probiotic?', assistant: 'Lactobacillus and Bifidobacterium.' },
      ],
    },
  ];
  const questions = [
    {
      question: 'Treatment for parvo?',
      answer: ['Fluids', 'IV fluids'],
      supporting_facts: 'D1:1',
      type: 'ss',
      label: 'Fluids',
    },
    {
      question:
        'Which probiotic?\n(A) Salmonella\n(B) Lactobacillus and Bifidobacterium\n(C) None\n(D) Garlic\nOutput only the letter.',
      answer: ['B'],
      supporting_facts: 'D2:2',
      type: 'fj',
      label: 'B',
    },
    {
      question: 'Which image shows the IV drip?',
      answer: ['img_2'],
      supporting_facts: 'D1:1,D1:2',
      type: 'fm',
      label: 'img_2',
    },
    {
      question: 'Across sessions?',
      answer: ['x'],
      supporting_facts: 'D1:2, D2:1; D9:1',
      type: 'ms',
      label: 'x',
    },
  ];
  await writeFile(join(root, 'sessions.json'), JSON.stringify(sessions));
  await writeFile(join(root, 'question.json'), JSON.stringify(questions));
  return root;
}
