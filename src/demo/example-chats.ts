/**
 * Three weeks of chats between Maya Reis (Lisbon) and her assistant, April 2024: one session per day,
 * rounds of [user, assistant]. The chats mention the plans but leave out the details that only the
 * emails and photos hold (new workshop date, seat number, receipt total, garden beds), so the example
 * questions need evidence from several sources.
 */
export interface ExampleChatDay {
  /** "2024-04-01" */
  date: string;
  /** Local time of the first round ("09:05"); later rounds follow a few minutes apart. */
  time: string;
  rounds: [user: string, assistant: string][];
}

export const EXAMPLE_CHAT_DAYS: ExampleChatDay[] = [
  {
    date: '2024-04-01',
    time: '08:40',
    rounds: [
      [
        'Morning! I finally got a plot at the Alvalade community garden. Three raised beds, all mine.',
        'Congratulations! Three beds is a good size for a first season. Do you know what you want to grow?',
      ],
      [
        'Tomatoes for sure, some salad, and herbs. Basil is a must.',
        'Tomatoes and basil also grow well side by side. Salad greens can go in early, before the heat.',
      ],
      [
        'I also want to try something with my hands that is not a keyboard. Thinking of a pottery class.',
        'Pottery is a lovely choice. Many studios run one-day beginner workshops on the wheel.',
      ],
      [
        'There is one at the Riverside Arts Centre. I will sign up today.',
        'Sounds good. Keep the confirmation email, it usually lists what to bring.',
      ],
    ],
  },
  {
    date: '2024-04-02',
    time: '12:15',
    rounds: [
      [
        'Signed up! The pottery workshop is on Saturday the 13th, in the morning.',
        'Great. A Saturday morning leaves the afternoon free to rest your arms, wheel work is tiring.',
      ],
      [
        'What should I wear? I do not want to ruin my good jeans.',
        'Old clothes and short sleeves. Clay splashes, and an apron helps. Trim long nails if you can.',
      ],
      [
        'I will forward the details to Leo, he might want to come along.',
        'Going with a friend makes it more fun. He will need to book his own place if it fills up.',
      ],
    ],
  },
  {
    date: '2024-04-03',
    time: '19:30',
    rounds: [
      [
        'Planning a day trip to Porto on Saturday the 20th. Train or bus?',
        'The Alfa Pendular train is the fastest, about three hours from Lisbon to Porto Campanha.',
      ],
      [
        'Train it is. Where should I have coffee there? Somewhere with character.',
        'Majestic Cafe on Rua de Santa Catarina is the classic: Belle Epoque room, good pastel de nata.',
      ],
      [
        'And I want to see the bookshop with the famous staircase.',
        'That is Livraria Lello. Buy the entry voucher online, the queue can be long; it counts towards a book.',
      ],
      [
        'Perfect, I will book the train tonight.',
        'Book early for the best fare and pick a window seat on the right side for the river views.',
      ],
    ],
  },
  {
    date: '2024-04-04',
    time: '07:10',
    rounds: [
      [
        'Starting a 10k training plan today. Goal: the Parque das Nacoes 10k in May.',
        'Nice goal. Three runs a week is plenty: two easy runs and one longer run at the weekend.',
      ],
      [
        'I will run Tuesdays and Thursdays before work, long run on Sunday.',
        'Good rhythm. Keep the easy runs truly easy, you should be able to talk while running.',
      ],
      [
        'Did 4 km this morning, felt slow but fine.',
        'A solid start. Add about half a kilometre each week and you will be ready in May.',
      ],
    ],
  },
  {
    date: '2024-04-05',
    time: '21:00',
    rounds: [
      [
        "Book club picked The Remains of the Day. We meet on the 18th at Leo's flat.",
        'A beautiful choice. Stevens the butler is one of the great unreliable narrators.',
      ],
      [
        'I promised to bake something. Ideas that travel well on the metro?',
        'An orange and olive oil cake is sturdy, keeps for days and travels well in a tin.',
      ],
      [
        'Orange cake it is. The train ticket email came in, by the way, all booked for Porto.',
        'Great, keep it handy: the booking has your coach and seat, and you will need it on board.',
      ],
    ],
  },
  {
    date: '2024-04-06',
    time: '17:45',
    rounds: [
      [
        'Spent the afternoon at the garden. We decided the layout for the three beds.',
        'Exciting! Did you settle where the tomatoes go?',
      ],
      [
        'Yes. I wrote the final plan on the whiteboard in the shed and took a photo so I do not forget it.',
        'Smart. A photo of the plan is easy to check when you are at the shop buying seedlings.',
      ],
      [
        'We also agreed on a watering schedule with the neighbours. It is on the whiteboard too.',
        'Shared schedules work best when they are written down where everyone sees them.',
      ],
    ],
  },
  {
    date: '2024-04-08',
    time: '20:20',
    rounds: [
      [
        "Leo's birthday is in two weeks. He likes cycling and old maps.",
        'An old map of his home town, framed, or a good bike light. Both are personal and useful.',
      ],
      [
        'The map idea is lovely. There is an antique shop in Principe Real.',
        'Antique shops there often have reprints of old city maps too, which are more affordable.',
      ],
      [
        'I will go on Saturday morning after the pottery workshop.',
        'A nice plan for the day: clay in the morning, maps in the afternoon.',
      ],
    ],
  },
  {
    date: '2024-04-09',
    time: '18:05',
    rounds: [
      [
        'Ugh, the arts centre emailed: the pottery workshop is moved. Something about the kiln.',
        'That is annoying. Did they give a new date, and is your deposit still valid?',
      ],
      [
        'I only skimmed it on the bus. It is still that weekend, I think, and the deposit carries over.',
        'Worth reading it properly tonight: the time and the room may have changed as well.',
      ],
      [
        'Will do. I need to tell Leo too, he was going to drive us.',
        'Forwarding him the update email is the quickest way to make sure you both have the same details.',
      ],
    ],
  },
  {
    date: '2024-04-11',
    time: '07:30',
    rounds: [
      [
        "Ran 6 km this morning! Legs were heavy after yesterday's garden work though.",
        'Six kilometres is real progress. Digging counts as strength training, so heavy legs make sense.',
      ],
      [
        'What should I eat before a morning run? I usually run on an empty stomach.',
        'A banana or a slice of toast with honey 30 minutes before is enough for an easy hour.',
      ],
      [
        'Banana it is. Long run on Sunday is cancelled, pottery day now.',
        'Then do a short easy run on Saturday instead and keep Sunday for the wheel.',
      ],
    ],
  },
  {
    date: '2024-04-14',
    time: '19:10',
    rounds: [
      [
        'Pottery was SO much fun. I made two small bowls and one very wobbly cup.',
        'That is a great result for a first time on the wheel! When will they be fired?',
      ],
      [
        'They fire them next week and I pick them up in May. Leo made a vase.',
        'Lovely. Glazing is often a second session, ask whether you can choose the colours.',
      ],
      [
        'Parking was a maze, I took a photo of the sign so we could find the car again.',
        'Always a good trick in big car parks, especially underground ones.',
      ],
    ],
  },
  {
    date: '2024-04-16',
    time: '21:40',
    rounds: [
      [
        'Packing for Porto on Saturday. Just a day bag. What am I forgetting?',
        'Phone charger, a light rain jacket, comfortable shoes for the hills, and the train ticket.',
      ],
      [
        'The ticket! I printed it, the train leaves really early.',
        'Then set two alarms and check the departure board at Santa Apolonia for the platform.',
      ],
      [
        'And the Lello voucher is booked for midday.',
        'Good timing: the bookshop in the late morning, then coffee and lunch nearby.',
      ],
    ],
  },
  {
    date: '2024-04-18',
    time: '23:05',
    rounds: [
      [
        'Book club was great. Everyone loved the orange cake, nobody finished the book.',
        'A successful evening by any measure. Did the discussion still work?',
      ],
      [
        'We talked about regret and dignity for two hours. Next book is Piranesi.',
        'Piranesi is short and strange in a good way, easier to finish by the next meeting.',
      ],
    ],
  },
  {
    date: '2024-04-21',
    time: '10:15',
    rounds: [
      [
        'Back from Porto. The staircase at Lello was as pretty as the photos.',
        'Wonderful! How was the rest of the day?',
      ],
      [
        'We had coffee and custard tarts at the Majestic. Expensive but worth it, I kept the receipt.',
        'The Majestic is worth it once. The receipt will help if you are tracking the trip budget.',
      ],
      [
        'Yes, I am writing up what the whole trip cost. The train was the biggest part.',
        'Add the train fare from the booking email, the Lello voucher and the cafe receipt and you have it.',
      ],
      [
        'Next weekend: garden again. The tomatoes need stakes.',
        'Stake them early, before the stems get heavy. Soft ties will not cut into the stems.',
      ],
    ],
  },
];
