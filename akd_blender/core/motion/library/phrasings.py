"""English phrasings of the role-based library"s motions, written for any character of the kind:
(kind, label) → (5 training phrasings, 2 held-out phrasings). Held-out phrasings are never trained on
and no phrasing appears twice."""

from __future__ import annotations

__all__ = ["PHRASINGS"]

PHRASINGS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {
    ("biped", "walk"): (
        (
            "a character walks forward",
            "a person walking ahead",
            "someone takes a walk",
            "the humanoid walks at an easy pace",
            "a figure walking forward step by step",
        ),
        ("an individual strolls along calmly", "the two-legged character goes for a walk"),
    ),
    ("biped", "run"): (
        (
            "a character runs forward",
            "a person running fast",
            "someone sprints ahead",
            "the humanoid breaks into a run",
            "a figure jogging quickly forward",
        ),
        ("an individual races along at full tilt", "the two-legged character dashes off running"),
    ),
    ("biped", "jump"): (
        (
            "a character jumps up",
            "a person jumping in place",
            "someone leaps into the air",
            "the humanoid hops straight up",
            "a figure springs upward",
        ),
        ("an individual bounds up off the floor", "the two-legged character does a vertical jump"),
    ),
    ("biped", "turn"): (
        (
            "a character turns around",
            "a person turning in place",
            "someone spins around on the spot",
            "the humanoid turns to face the other way",
            "a figure rotating where it stands",
        ),
        ("an individual pivots to look behind", "the two-legged character does an about-face"),
    ),
    ("biped", "sit"): (
        (
            "a character sits down",
            "a person sitting down on the ground",
            "someone takes a seat on the floor",
            "the humanoid sits",
            "a figure lowering itself to sit",
        ),
        ("an individual settles down onto the floor", "the two-legged character plops down to sit"),
    ),
    ("biped", "wave"): (
        (
            "a character waves",
            "a person waving hello",
            "someone waves a hand above the head",
            "the humanoid waves its right arm",
            "a figure waving goodbye",
        ),
        ("an individual greets someone with a wave", "the two-legged character signals with a raised hand"),
    ),
    ("biped", "raise_arms"): (
        (
            "a character raises both arms",
            "a person lifting both arms up",
            "someone puts their hands up in the air",
            "the humanoid raises its arms overhead",
            "a figure reaching up with both arms",
        ),
        ("an individual throws both hands skyward", "the two-legged character lifts its arms high"),
    ),
    ("biped", "kick"): (
        (
            "a character kicks",
            "a person kicking forward",
            "someone does a front kick",
            "the humanoid kicks with its right leg",
            "a figure kicking a ball",
        ),
        ("an individual strikes out with a foot", "the two-legged character snaps a kick ahead"),
    ),
    ("biped", "bow"): (
        (
            "a character bows",
            "a person bowing politely",
            "someone bends forward in a bow",
            "the humanoid takes a bow",
            "a figure bowing to the audience",
        ),
        ("an individual leans down respectfully from the waist", "the two-legged character greets with a deep bow"),
    ),
    ("biped", "crouch"): (
        (
            "a character crouches down",
            "a person crouching",
            "someone squats low",
            "the humanoid bends its knees and squats",
            "a figure ducking down",
        ),
        ("an individual hunkers down close to the floor", "the two-legged character drops into a squat"),
    ),
    ("biped", "clap"): (
        (
            "a character claps",
            "a person clapping hands",
            "someone applauds",
            "the humanoid claps its hands together",
            "a figure clapping in front of its chest",
        ),
        ("an individual gives a round of applause", "the two-legged character brings its palms together repeatedly"),
    ),
    ("biped", "punch"): (
        (
            "a character punches",
            "a person throwing punches",
            "someone boxing the air",
            "the humanoid punches forward",
            "a figure jabbing with both fists",
        ),
        ("an individual shadowboxes", "the two-legged character strikes out with its fists"),
    ),
    ("quadruped", "walk"): (
        (
            "an animal walks forward",
            "a four-legged creature walking",
            "the beast walks ahead",
            "a quadruped walking slowly",
            "an animal taking steps forward",
        ),
        ("a four-footed creature ambles along", "the animal paces forward calmly"),
    ),
    ("quadruped", "run"): (
        (
            "an animal runs forward",
            "a four-legged creature running",
            "the beast trots quickly ahead",
            "a quadruped running",
            "an animal jogging forward",
        ),
        ("a four-footed creature hurries along at a trot", "the animal moves off at a brisk run"),
    ),
    ("quadruped", "jump"): (
        (
            "an animal jumps",
            "a four-legged creature leaping",
            "the beast jumps forward",
            "a quadruped springs into the air",
            "an animal leaping ahead",
        ),
        ("a four-footed creature bounds over an obstacle", "the animal pounces forward"),
    ),
    ("quadruped", "turn"): (
        (
            "an animal turns around",
            "a four-legged creature turning in place",
            "the beast spins around",
            "a quadruped turning to face the other way",
            "an animal rotating on the spot",
        ),
        ("a four-footed creature wheels about", "the animal pivots where it stands"),
    ),
    ("quadruped", "sit"): (
        (
            "an animal sits down",
            "a four-legged creature sitting",
            "the beast sits on its haunches",
            "a quadruped sitting down",
            "an animal taking a seat",
        ),
        ("a four-footed creature settles onto its hind legs", "the animal lowers its rump to sit"),
    ),
    ("quadruped", "wag_tail"): (
        (
            "an animal wags its tail",
            "a four-legged creature wagging its tail",
            "the beast swishes its tail",
            "a quadruped wagging happily",
            "an animal swinging its tail from side to side",
        ),
        ("a four-footed creature flicks its tail back and forth", "the animal shakes its tail excitedly"),
    ),
    ("quadruped", "lie_down"): (
        (
            "an animal lies down",
            "a four-legged creature lying down",
            "the beast lies on the ground",
            "a quadruped settling down to rest",
            "an animal lying down on its belly",
        ),
        ("a four-footed creature stretches out on the floor", "the animal flops down to rest"),
    ),
    ("quadruped", "head_down"): (
        (
            "an animal lowers its head to eat",
            "a four-legged creature grazing",
            "the beast sniffs the ground",
            "a quadruped eating from the ground",
            "an animal putting its head down",
        ),
        ("a four-footed creature noses around in the grass", "the animal bends its neck down to feed"),
    ),
    ("quadruped", "rear_up"): (
        (
            "an animal rears up",
            "a four-legged creature rearing on its hind legs",
            "the beast stands up on its back legs",
            "a quadruped rearing up",
            "an animal lifting its front legs off the ground",
        ),
        ("a four-footed creature rises up on its hind legs", "the animal stands tall on two legs for a moment"),
    ),
    ("quadruped", "gallop"): (
        (
            "an animal gallops",
            "a four-legged creature galloping fast",
            "the beast gallops ahead",
            "a quadruped at full gallop",
            "an animal galloping forward",
        ),
        ("a four-footed creature charges ahead at a gallop", "the animal bounds along at top speed"),
    ),
    ("bird", "walk"): (
        (
            "a bird walks forward",
            "a bird walking",
            "the bird steps ahead",
            "a feathered creature walking along",
            "a bird strutting forward",
        ),
        ("a fowl wanders forward on foot", "the bird paces along the ground"),
    ),
    ("bird", "run"): (
        (
            "a bird runs forward",
            "a bird running fast",
            "the bird dashes ahead on foot",
            "a feathered creature running",
            "a bird scurrying forward",
        ),
        ("a fowl sprints along the ground", "the bird hurries away on its legs"),
    ),
    ("bird", "jump"): (
        (
            "a bird jumps up",
            "a bird jumping in place",
            "the bird leaps into the air",
            "a feathered creature jumping",
            "a bird springing upward",
        ),
        ("a fowl bounces up off the ground", "the bird makes a big jump"),
    ),
    ("bird", "turn"): (
        (
            "a bird turns around",
            "a bird turning in place",
            "the bird spins around",
            "a feathered creature turning to face the other way",
            "a bird rotating on the spot",
        ),
        ("a fowl wheels about where it stands", "the bird swivels around"),
    ),
    ("bird", "sit"): (
        (
            "a bird sits down",
            "a bird settling down",
            "the bird sits on the ground",
            "a feathered creature crouching down to rest",
            "a bird nestling down",
        ),
        ("a fowl hunkers down as if on a nest", "the bird tucks its legs under and rests"),
    ),
    ("bird", "flap_wings"): (
        (
            "a bird flaps its wings",
            "a bird flapping",
            "the bird beats its wings",
            "a feathered creature flapping its wings",
            "a bird spreading and flapping its wings",
        ),
        ("a fowl beats its wings up and down", "the bird fans its wings"),
    ),
    ("bird", "peck"): (
        (
            "a bird pecks at the ground",
            "a bird pecking",
            "the bird pecks for food",
            "a feathered creature pecking the ground",
            "a bird jabbing its beak downward",
        ),
        ("a fowl picks at seeds on the floor", "the bird strikes the ground with its beak"),
    ),
    ("bird", "hop"): (
        (
            "a bird hops forward",
            "a bird hopping",
            "the bird hops along",
            "a feathered creature hopping ahead",
            "a bird bouncing forward on both feet",
        ),
        ("a fowl skips along with little jumps", "the bird bounds forward in small hops"),
    ),
    ("hexapod", "walk"): (
        (
            "an insect walks forward",
            "a six-legged creature walking",
            "the bug crawls ahead",
            "a beetle walking along",
            "an insect scuttling forward",
        ),
        ("a six-legged critter creeps across the ground", "the bug marches ahead on its legs"),
    ),
    ("hexapod", "run"): (
        (
            "an insect runs forward",
            "a six-legged creature running fast",
            "the bug scurries ahead",
            "a beetle rushing along",
            "an insect dashing forward",
        ),
        ("a six-legged critter races across the floor", "the bug skitters away quickly"),
    ),
    ("hexapod", "jump"): (
        (
            "an insect jumps up",
            "a six-legged creature jumping",
            "the bug leaps into the air",
            "a beetle springing upward",
            "an insect jumping in place",
        ),
        ("a six-legged critter pops up off the ground", "the bug makes a sudden leap"),
    ),
    ("hexapod", "turn"): (
        (
            "an insect turns around",
            "a six-legged creature turning in place",
            "the bug spins around",
            "a beetle turning to face the other way",
            "an insect rotating on the spot",
        ),
        ("a six-legged critter wheels about", "the bug pivots where it stands"),
    ),
    ("hexapod", "sit"): (
        (
            "an insect settles down",
            "a six-legged creature lowering its body",
            "the bug crouches to the ground",
            "a beetle resting its body on the ground",
            "an insect hunkering down",
        ),
        ("a six-legged critter flattens itself against the floor", "the bug sinks down low"),
    ),
    ("hexapod", "hop"): (
        (
            "an insect hops forward",
            "a six-legged creature hopping",
            "the bug hops along",
            "a beetle hopping ahead",
            "an insect bouncing forward",
        ),
        ("a six-legged critter skips along in little jumps", "the bug bounds forward in small hops"),
    ),
    ("hexapod", "raise_front_legs"): (
        (
            "an insect raises its front legs",
            "a six-legged creature rearing up",
            "the bug lifts its front legs in the air",
            "a beetle doing a threat display",
            "an insect waving its front legs",
        ),
        ("a six-legged critter holds its forelegs up menacingly", "the bug rears back with its front legs high"),
    ),
    ("biped", "look_around"): (
        (
            "a character looks around",
            "a person looking left and right",
            "someone turns their head to look both ways",
            "the humanoid glances to each side",
            "a figure scanning its surroundings with its head",
        ),
        (
            "an individual peers about in every direction without moving its feet",
            "the two-legged character surveys the area, head turning",
        ),
    ),
    ("biped", "nod"): (
        (
            "a character nods",
            "a person nodding yes",
            "someone nods their head twice",
            "the humanoid bobs its head in agreement",
            "a figure giving a nod",
        ),
        ("an individual agrees with a couple of nods", "the two-legged character dips its chin up and down"),
    ),
    ("biped", "shake_head"): (
        (
            "a character shakes its head",
            "a person shaking their head no",
            "someone shakes their head side to side",
            "the humanoid turns its head left and right to say no",
            "a figure shaking its head in disagreement",
        ),
        ("an individual refuses with a shake of the head", "the two-legged character wags its head from side to side"),
    ),
    ("biped", "stretch"): (
        (
            "a character stretches",
            "a person stretching after waking up",
            "someone stretches their arms up and arches back",
            "the humanoid does a big morning stretch",
            "a figure stretching its whole body with a yawn",
        ),
        ("an individual limbers up, reaching high and leaning back", "the two-legged character has a good long stretch"),
    ),
    ("biped", "point"): (
        (
            "a character points forward",
            "a person pointing at something ahead",
            "someone points with one arm straight out",
            "the humanoid points its finger at a target",
            "a figure pointing into the distance",
        ),
        (
            "an individual indicates something ahead with an outstretched arm",
            "the two-legged character gestures at a spot in front",
        ),
    ),
    ("quadruped", "look_around"): (
        (
            "an animal looks around",
            "a four-legged creature looking left and right",
            "the beast turns its head to look both ways",
            "a quadruped glancing to each side",
            "an animal scanning its surroundings",
        ),
        ("a four-footed creature peers about warily, keeping still", "the animal keeps watch, head turning"),
    ),
    ("quadruped", "nod"): (
        (
            "an animal nods its head",
            "a four-legged creature nodding",
            "the beast bobs its head twice",
            "a quadruped nodding up and down",
            "an animal giving a nod",
        ),
        ("a four-footed creature dips its chin a couple of times", "the animal nods in agreement"),
    ),
    ("quadruped", "shake_head"): (
        (
            "an animal shakes its head",
            "a four-legged creature shaking its head no",
            "the beast turns its head left and right quickly",
            "a quadruped shaking its head side to side",
            "an animal tossing its head from side to side",
        ),
        ("a four-footed creature refuses with a shake of the head", "the animal swings its muzzle back and forth"),
    ),
    ("quadruped", "stretch"): (
        (
            "an animal does a play bow",
            "a four-legged creature stretching with its front end down",
            "the beast bows with its rump in the air",
            "a quadruped stretching its back, chest low",
            "an animal doing a downward dog stretch",
        ),
        ("a four-footed creature lowers its chest and keeps its hindquarters high", "the animal stretches its spine, front low"),
    ),
    ("quadruped", "shake"): (
        (
            "an animal shakes itself dry",
            "a wet four-legged creature shaking off water",
            "the beast shakes its whole body",
            "a quadruped doing a wet dog shake",
            "an animal shaking the water from its fur",
        ),
        ("a four-footed creature shakes off after a swim", "the animal gives its coat a vigorous shake"),
    ),
    ("bird", "look_around"): (
        (
            "a bird looks around",
            "a bird looking left and right",
            "the bird turns its head to look both ways",
            "a bird glancing to each side",
            "a bird scanning its surroundings",
        ),
        ("a fowl peers about warily", "the bird keeps a lookout, head turning"),
    ),
    ("bird", "nod"): (
        (
            "a bird nods",
            "a bird nodding its head",
            "the bird bobs its head twice",
            "a bird nodding up and down",
            "a bird giving a nod",
        ),
        ("a fowl dips its beak down and up a couple of times", "the bird nods in agreement"),
    ),
    ("bird", "shake_head"): (
        (
            "a bird shakes its head",
            "a bird shaking its head no",
            "the bird turns its head left and right quickly",
            "a bird shaking its head side to side",
            "a bird tossing its head from side to side",
        ),
        ("a fowl refuses with a shake of the head", "the bird swings its beak back and forth"),
    ),
    ("hexapod", "look_around"): (
        (
            "an insect looks around",
            "a six-legged creature looking left and right",
            "the bug turns its head to look both ways",
            "a beetle glancing to each side",
            "an insect scanning its surroundings",
        ),
        ("a six-legged critter peers about warily", "the bug keeps watch, head turning"),
    ),
}
