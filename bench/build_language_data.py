"""Build the per-language evidence data of bench/bench_languages.py from public GitHub snapshots.

Every corpus is read from a snapshot brought onto this machine by the session's ``fetch`` tool (a
bare git directory, ``/work/.mirror/OWNER+NAME/repo``; ``--mirror`` to point elsewhere) and written
OUTSIDE the repository (``--out``, default /work/extdata) in the layout bench_languages.py reads:

    <lang>/sources/NAME.txt.gz      one unit (sentence, review, paragraph) a line, sampled
    <lang>/targets/NAME/test.<ext>  the NER file as published (KLUE's .tsv, CoNLL-2002 ...)
    <lang>/expected.json            {"english": SOURCE, "matched": {TARGET: SOURCE}}

What each corpus is, where it comes from and its licence is in SOURCES below (and
docs/languages.md). The only changes made to the published files are said there: a sentence break
where a file has none (ANERcorp), the character-position digits of Weibo NER dropped, JSON span
annotations (stockmark) written as one character a row, and source lines that hold a target sentence
dropped (decontamination).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import re
import subprocess
import tarfile
import zipfile
from pathlib import Path

MIRROR = Path("/work/.mirror")
ENGLISH = Path("/work/shared/data/sources/news_1bwb.txt.gz")  # the English distractor (1BWB news)

# name: (language, repository, what it is, licence as stated)
SOURCES = {
    "klue_news / klue_reviews": (
        "ko",
        "KLUE-benchmark/KLUE : klue_benchmark/klue-ner-v1.1/klue-ner-v1.1_dev.tsv",
        "KLUE-NER dev as published (one Hangul character a row, a row for each space), "
        "split by sentence id: WIKITREE news (-wikitree) and NSMC movie reviews (-nsmc)",
        "CC BY-SA 4.0",
    ),
    "ko_reviews_nsmc": (
        "ko",
        "e9t/nsmc : raw/*.json (review field)",
        "Naver movie reviews",
        "CC0 1.0",
    ),
    "ko_news": (
        "ko",
        "jungyeul/korean-parallel-corpora : korean-english-news-v1 (test, dev: .ko side)",
        "Korean news (JoongAng Daily / Korea Herald articles of the parallel corpus)",
        "see repo README",
    ),
    "ko_comments": (
        "ko",
        "kocohub/korean-hate-speech : unlabeled/unlabeled_comments_5.txt",
        "comments on Korean entertainment news (unlabelled)",
        "CC BY-SA 4.0",
    ),
    "phoner_word / phoner_syllable": (
        "vi",
        "VinAIResearch/PhoNER_COVID19 : data/{word,syllable}/test_*.conll",
        "COVID-19 news NER, word level (syllables joined by '_') and syllable level",
        "research use (repo README)",
    ),
    "vi_news": (
        "vi",
        "undertheseanlp/resources : resources/CP_Vietnamese-UNC/corpus",
        "Dan Tri news 2020-2021 (underthesea news corpus)",
        "GPL-3.0 (repo)",
    ),
    "vi_legal": (
        "vi",
        "undertheseanlp/resources : resources/CP_Vietnamese-VLC/corpus",
        "Vietnamese law codes (underthesea legal corpus)",
        "GPL-3.0 (repo)",
    ),
    "anercorp": (
        "ar",
        "emad-elsaid/QA : data/ANERCorp.txt",
        "ANERcorp (Benajiba et al. 2007) as first "
        "published: 'word TAG' lines with no sentence breaks; a break added after '.', '?' and '!'",
        "free for research (ANERcorp)",
    ),
    "ar_news_saudi": (
        "ar",
        "parallelfold/SaudiNewsNet : dataset/2015-07-2*.zip (content field)",
        "Saudi newspaper articles, July 2015",
        "CC BY-NC-SA 4.0",
    ),
    "ar_wiki": (
        "ar",
        "emad-elsaid/QA : data/corpus/*.txt (words of 'word TAG' lines)",
        "28 Arabic Wikipedia articles (AQMAR-style; science, history, sport)",
        "CC BY-SA (Wikipedia)",
    ),
    "conll2002_ned": (
        "nl",
        "teropa/nlp : resources/corpora/conll2002/ned.testa",
        "CoNLL-2002 Dutch dev (De Morgen 2000) as published: -DOCSTART- lines, a POS column",
        "research use (CoNLL-2002)",
    ),
    "nl_news_alpino": (
        "nl",
        "UniversalDependencies/UD_Dutch-Alpino : nl_alpino-ud-{dev,test}.conllu (# text)",
        "Alpino treebank: Dutch newspaper text",
        "CC BY-SA 4.0",
    ),
    "nl_wiki_lassy": (
        "nl",
        "UniversalDependencies/UD_Dutch-LassySmall : nl_lassysmall-ud-{dev,test}.conllu",
        "Lassy Small: Dutch Wikipedia",
        "CC BY-SA 4.0",
    ),
    "weibo_ner": (
        "zh",
        "hltcoe/golden-horse : data/weiboNER_2nd_conll.test",
        "Weibo NER (Peng & Dredze "
        "2015), one character a row; the word-position digit after each character dropped",
        "CC BY-SA 3.0",
    ),
    "zh_weibo": (
        "zh",
        "hltcoe/golden-horse : data/weiboNER_2nd_conll.{train,dev} (text only)",
        "Weibo posts (other posts of the same collection, no tags)",
        "CC BY-SA 3.0",
    ),
    "zh_news_pku": (
        "zh",
        "hltcoe/golden-horse : data/pku_test_gold.utf8 (spaces removed)",
        "People's Daily news (SIGHAN 2005 PKU test)",
        "research use (SIGHAN 2005)",
    ),
    "zh_wiki": (
        "zh",
        "UniversalDependencies/UD_Chinese-GSD : zh_gsd-ud-{dev,test}.conllu (# text)",
        "Chinese Wikipedia (traditional characters)",
        "CC BY-SA 4.0",
    ),
    "ja_wiki_ner": (
        "ja",
        "stockmarkteam/ner-wikipedia-dataset : ner.json",
        "Japanese Wikipedia NER (Stockmark), spans written one character a row (BIO)",
        "CC BY-SA 3.0",
    ),
    "thainer": (
        "th",
        "wannaphong/thai-ner : model/1.3/data.conll",
        "ThaiNER 1.3 (mostly news), its last 3,000 "
        "sentences as published (words, a ' '<TAB>O row for each space)",
        "CC BY 3.0",
    ),
    "th_news_thainer": (
        "th",
        "wannaphong/thai-ner : model/1.3/data.conll",
        "the other ThaiNER sentences, untagged",
        "CC BY 3.0",
    ),
    "th_social_wisesight": (
        "th",
        "PyThaiNLP/wisesight-sentiment : {neu,neg,pos}.txt",
        "Thai social media posts (Wisesight)",
        "CC0 1.0",
    ),
    "th_pud": (
        "th",
        "UniversalDependencies/UD_Thai-PUD : th_pud-ud-test.conllu (# text)",
        "1,000 news and Wikipedia sentences translated into Thai (PUD)",
        "CC BY-SA 4.0",
    ),
    "ja_meiji_magazines": (
        "ja",
        "UniversalDependencies/UD_Japanese-Modern : ja_modern-ud-test.conllu (# text)",
        "Meiji-era magazine articles (1870s-1900s)",
        "CC BY-NC-SA 4.0",
    ),
    "germeval_news": (
        "de",
        "viniciusrpb/cloud_image_classification : NER-de-test.tsv",
        "GermEval 2014 NER test "
        "as published (numbered rows, a '#' source line a sentence), its news sentences only",
        "CC BY 4.0 (GermEval 2014)",
    ),
    "de_news_gnad": (
        "de",
        "tblock/10kGNAD : test.csv",
        "Austrian newspaper articles (DerStandard, 10kGNAD)",
        "CC BY-NC-SA 4.0",
    ),
    "de_web_gsd": (
        "de",
        "UniversalDependencies/UD_German-GSD : de_gsd-ud-{dev,test}.conllu (# text)",
        "German web text (news, reviews, wiki, blogs)",
        "CC BY-SA 4.0",
    ),
    "conll2002_esp": (
        "es",
        "teropa/nlp : resources/corpora/conll2002/esp.testa",
        "CoNLL-2002 Spanish dev (EFE newswire 2000) as published in NLTK's copy: word, POS, tag",
        "research use (CoNLL-2002)",
    ),
    "es_news_efe": (
        "es",
        "teropa/nlp : resources/corpora/conll2002/esp.train (words only)",
        "EFE newswire 2000: the other articles of CoNLL-2002 Spanish, untagged",
        "research use",
    ),
    "es_web_gsd": (
        "es",
        "UniversalDependencies/UD_Spanish-GSD : es_gsd-ud-{dev,test}.conllu (# text)",
        "Spanish web text (blogs, news, wiki)",
        "CC BY-SA 4.0",
    ),
    "ja_wiki_gsd": (
        "ja",
        "UniversalDependencies/UD_Japanese-GSD : ja_gsd-ud-{dev,test}.conllu (# text)",
        "Japanese Wikipedia",
        "CC BY-SA 4.0",
    ),
}


def show(repo: str, path: str, mirror: Path) -> bytes:
    """A file of a fetched snapshot (``git show HEAD:path``)."""
    git = mirror / repo.replace("/", "+") / "repo"
    if (git / ".git").is_dir():
        git = git / ".git"
    return subprocess.run(
        ["git", "--git-dir", str(git), "show", f"HEAD:{path}"], check=True, capture_output=True
    ).stdout


def listing(repo: str, under: str, mirror: Path) -> list[str]:
    git = mirror / repo.replace("/", "+") / "repo"
    if (git / ".git").is_dir():
        git = git / ".git"
    out = subprocess.run(
        ["git", "--git-dir", str(git), "ls-tree", "-r", "--name-only", "HEAD", under],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [p for p in out.splitlines() if p]


def write_source(
    out: Path, lang: str, name: str, lines: list[str], limit: int, avoid: set[str]
) -> None:
    """Sampled, de-duplicated, decontaminated (no line equal to a target sentence, spaces ignored) "
      "lines."""
    seen: set[str] = set()
    kept = []
    for line in lines:
        line = " ".join(line.split())
        key = line.replace(" ", "")
        if len(key) < 2 or key in seen or key in avoid:
            continue
        seen.add(key)
        kept.append(line)
    random.Random(13).shuffle(kept)
    kept = kept[:limit]
    path = out / lang / "sources" / f"{name}.txt.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(kept) + "\n")
    print(
        f"  {lang}/{name}: {len(kept):,} lines, {sum(len(x.split()) for x in kept):,} whitespace "
        f"words"
    )


def write_target(out: Path, lang: str, name: str, text: str, ext: str = "conll") -> None:
    path = out / lang / "targets" / name / f"test.{ext}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    rows = sum(1 for line in text.splitlines() if line.strip() and not line.startswith("#"))
    print(f"  {lang}/targets/{name}: {rows:,} rows")


def english(out: Path, lang: str, limit: int) -> None:
    with gzip.open(ENGLISH, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    write_source(out, lang, "en_news", lines, limit, set())


def expected(out: Path, lang: str, matched: dict[str, str]) -> None:
    (out / lang / "expected.json").write_text(
        json.dumps({"english": "en_news", "matched": matched}, indent=1)
    )


def conll_sentences_text(text: str) -> set[str]:
    """Every sentence of a 'token ... tag' file as its tokens joined without spaces (for "
      "decontamination)."""
    out, cur = set(), []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        cols = line.split("\t") if "\t" in line else line.split()
        if not line.strip():
            if cur:
                out.add("".join(cur))
            cur = []
        elif cols[0] != "-DOCSTART-":
            cur.append(cols[0].strip().replace("_", ""))
    if cur:
        out.add("".join(cur))
    return out


def ud_text(repo: str, files: list[str], mirror: Path) -> list[str]:
    return [
        line[len("# text = ") :]
        for f in files
        for line in show(repo, f, mirror).decode().splitlines()
        if line.startswith("# text = ")
    ]


# -- languages -------------------------------------------------------------------------------------


def korean(out: Path, mirror: Path, limit: int) -> None:
    tsv = show(
        "KLUE-benchmark/KLUE", "klue_benchmark/klue-ner-v1.1/klue-ner-v1.1_dev.tsv", mirror
    ).decode()
    blocks = [b for b in tsv.split("\n\n") if "\t" in b]
    parts: dict[str, list[str]] = {"news": [], "reviews": []}
    texts: set[str] = set()
    for block in blocks:
        head = next((line for line in block.splitlines() if line.startswith("## klue-ner")), "")
        if not head:
            continue
        kind = "news" if head.split("\t")[0].endswith("wikitree") else "reviews"
        parts[kind].append(block.strip("\n"))
        texts.add(re.sub(r"<([^:<>]*):[A-Z]{2}>", r"\1", head.split("\t", 1)[1]).replace(" ", ""))
    for kind, kept in parts.items():
        write_target(out, "ko", f"klue_{kind}", "\n\n".join(kept) + "\n", ext="tsv")
    reviews = []
    for path in sorted(listing("e9t/nsmc", "raw", mirror))[:4000]:
        reviews.extend(r["review"] for r in json.loads(show("e9t/nsmc", path, mirror)))
    write_source(out, "ko", "ko_reviews_nsmc", reviews, limit, texts)
    news = []
    for split in ("test", "dev"):
        data = show(
            "jungyeul/korean-parallel-corpora",
            f"korean-english-news-v1/korean-english-park.{split}.tar.gz",
            mirror,
        )
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if member.name.endswith(".ko"):
                    news.extend(
                        tar.extractfile(member).read().decode("utf-8", "replace").splitlines()
                    )
    write_source(out, "ko", "ko_news", news, limit, texts)
    comments = show(
        "kocohub/korean-hate-speech", "unlabeled/unlabeled_comments_5.txt", mirror
    ).decode()
    write_source(out, "ko", "ko_comments", comments.splitlines(), limit, texts)
    english(out, "ko", limit)
    expected(out, "ko", {"klue_news": "ko_news", "klue_reviews": "ko_reviews_nsmc"})


def vietnamese(out: Path, mirror: Path, limit: int) -> None:
    repo = "VinAIResearch/PhoNER_COVID19"
    avoid = set()
    for level in ("word", "syllable"):
        text = show(repo, f"data/{level}/test_{level}.conll", mirror).decode()
        avoid |= conll_sentences_text(text)
        write_target(out, "vi", f"phoner_{level}", text)
    res = "undertheseanlp/resources"
    news = [
        line
        for p in listing(res, "resources/CP_Vietnamese-UNC/corpus", mirror)
        if p.endswith(".txt")
        for line in show(res, p, mirror).decode().splitlines()
        if not line.startswith("#")
    ]
    write_source(out, "vi", "vi_news", news, limit, avoid)
    legal = [
        line
        for p in listing(res, "resources/CP_Vietnamese-VLC/corpus", mirror)
        if p.endswith(".txt")
        for line in show(res, p, mirror).decode().splitlines()
    ]
    write_source(out, "vi", "vi_legal", legal, limit, avoid)
    english(out, "vi", limit)
    expected(out, "vi", {"phoner_word": "vi_news", "phoner_syllable": "vi_news"})


def arabic(out: Path, mirror: Path, limit: int) -> None:
    raw = (
        show("emad-elsaid/QA", "data/ANERCorp.txt", mirror).decode("utf-8", "replace").splitlines()
    )
    rows = []
    for line in raw:
        cols = line.split()
        if len(cols) != 2:
            continue  # a few lines hold no 'word TAG' pair
        rows.append(f"{cols[0]} {cols[1]}")
        if cols[0] in (".", "?", "!", "؟"):
            rows.append("")
    text = "\n".join(rows[-40_000:]).lstrip("\n") + "\n"  # the last articles (about 35,000 words)
    write_target(out, "ar", "anercorp", text)
    avoid = conll_sentences_text(text)
    news = []
    for day in ("2015-07-21", "2015-07-22", "2015-07-23"):
        with zipfile.ZipFile(
            io.BytesIO(show("parallelfold/SaudiNewsNet", f"dataset/{day}.zip", mirror))
        ) as z:
            for name in z.namelist():
                for article in json.loads(z.read(name)):
                    news.extend(
                        p for p in re.split(r"(?<=[.!؟?])\s+", article.get("content", "")) if p
                    )
    write_source(out, "ar", "ar_news_saudi", news, limit, avoid)
    wiki = []
    for p in listing("emad-elsaid/QA", "data/corpus", mirror):
        words: list[str] = []
        for line in show("emad-elsaid/QA", p, mirror).decode("utf-8", "replace").splitlines():
            cols = line.split()
            if cols:
                words.append(cols[0])
                if cols[0] in (".", "?", "!", "؟"):
                    wiki.append(" ".join(words))
                    words = []
        if words:
            wiki.append(" ".join(words))
    write_source(out, "ar", "ar_wiki", wiki, limit, avoid)
    english(out, "ar", limit)
    expected(out, "ar", {"anercorp": "ar_news_saudi"})


def dutch(out: Path, mirror: Path, limit: int) -> None:
    text = show("teropa/nlp", "resources/corpora/conll2002/ned.testa", mirror).decode("latin-1")
    write_target(out, "nl", "conll2002_ned", text)
    avoid = conll_sentences_text(text)
    alpino = ud_text(
        "UniversalDependencies/UD_Dutch-Alpino",
        ["nl_alpino-ud-dev.conllu", "nl_alpino-ud-test.conllu"],
        mirror,
    )
    write_source(out, "nl", "nl_news_alpino", alpino, limit, avoid)
    lassy = ud_text(
        "UniversalDependencies/UD_Dutch-LassySmall",
        ["nl_lassysmall-ud-dev.conllu", "nl_lassysmall-ud-test.conllu"],
        mirror,
    )
    write_source(out, "nl", "nl_wiki_lassy", lassy, limit, avoid)
    english(out, "nl", limit)
    expected(out, "nl", {"conll2002_ned": "nl_news_alpino"})


def _weibo(text: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.splitlines():
        cols = line.split()
        rows.append(
            (re.sub(r"\d$", "", cols[0]) if len(cols[0]) > 1 else cols[0], cols[-1])
            if cols
            else ("", "")
        )
    return rows


def chinese(out: Path, mirror: Path, limit: int) -> None:
    repo = "hltcoe/golden-horse"
    test = _weibo(show(repo, "data/weiboNER_2nd_conll.test", mirror).decode())
    write_target(
        out, "zh", "weibo_ner", "\n".join(f"{c}\t{t}" if c else "" for c, t in test) + "\n"
    )
    avoid = conll_sentences_text("\n".join(f"{c}\t{t}" if c else "" for c, t in test))
    posts = []
    for split in ("train", "dev"):
        post: list[str] = []
        for c, _ in _weibo(show(repo, f"data/weiboNER_2nd_conll.{split}", mirror).decode()) + [
            ("", "")
        ]:
            if c:
                post.append(c)
            elif post:
                posts.append("".join(post))
                post = []
    write_source(out, "zh", "zh_weibo", posts, limit, avoid)
    pku = [
        line.replace(" ", "")
        for line in show(repo, "data/pku_test_gold.utf8", mirror).decode().splitlines()
    ]
    write_source(out, "zh", "zh_news_pku", pku, limit, avoid)
    wiki = ud_text(
        "UniversalDependencies/UD_Chinese-GSD",
        ["zh_gsd-ud-dev.conllu", "zh_gsd-ud-test.conllu"],
        mirror,
    )
    write_source(out, "zh", "zh_wiki", wiki, limit, avoid)
    english(out, "zh", limit)
    expected(out, "zh", {"weibo_ner": "zh_weibo"})


def japanese(out: Path, mirror: Path, limit: int) -> None:
    items = json.loads(show("stockmarkteam/ner-wikipedia-dataset", "ner.json", mirror))
    random.Random(13).shuffle(items)
    blocks = []
    for item in items[:2500]:
        tags = ["O"] * len(item["text"])
        for e in item["entities"]:
            start, end = e["span"]
            for i in range(start, min(end, len(tags))):
                tags[i] = ("B-" if i == start else "I-") + e["type"]
        blocks.append("\n".join(f"{c}\t{t}" for c, t in zip(item["text"], tags) if not c.isspace()))
    write_target(out, "ja", "ja_wiki_ner", "\n\n".join(blocks) + "\n")
    avoid = {item["text"].replace(" ", "") for item in items[:2500]}
    gsd = ud_text(
        "UniversalDependencies/UD_Japanese-GSD",
        ["ja_gsd-ud-dev.conllu", "ja_gsd-ud-test.conllu"],
        mirror,
    )
    write_source(out, "ja", "ja_wiki_gsd", gsd, limit, avoid)
    modern = ud_text(
        "UniversalDependencies/UD_Japanese-Modern", ["ja_modern-ud-test.conllu"], mirror
    )
    write_source(out, "ja", "ja_meiji_magazines", modern, limit, avoid)
    english(out, "ja", limit)
    expected(out, "ja", {"ja_wiki_ner": "ja_wiki_gsd"})


def german(out: Path, mirror: Path, limit: int) -> None:
    text = show("viniciusrpb/cloud_image_classification", "NER-de-test.tsv", mirror).decode()
    blocks = [b for b in text.split("\n\n") if b.strip()]
    news = [b for b in blocks if b.startswith("#") and "wikipedia.org" not in b.split("\n", 1)[0]]
    write_target(out, "de", "germeval_news", "\n\n".join(news) + "\n", ext="tsv")
    avoid = {
        "".join(line.split("\t")[1] for line in b.splitlines()[1:] if "\t" in line) for b in news
    }
    gnad = [
        line.split(";", 1)[1].strip("'")
        for line in show("tblock/10kGNAD", "test.csv", mirror).decode().splitlines()
        if ";" in line
    ]
    sentences = [p for article in gnad for p in re.split(r"(?<=[.!?])\s+", article) if p]
    write_source(out, "de", "de_news_gnad", sentences, limit, avoid)
    gsd = ud_text(
        "UniversalDependencies/UD_German-GSD",
        ["de_gsd-ud-dev.conllu", "de_gsd-ud-test.conllu"],
        mirror,
    )
    write_source(out, "de", "de_web_gsd", gsd, limit, avoid)
    english(out, "de", limit)
    expected(out, "de", {"germeval_news": "de_news_gnad"})


def spanish(out: Path, mirror: Path, limit: int) -> None:
    repo = "teropa/nlp"
    text = show(repo, "resources/corpora/conll2002/esp.testa", mirror).decode("latin-1")
    write_target(out, "es", "conll2002_esp", text)
    avoid = conll_sentences_text(text)
    train = show(repo, "resources/corpora/conll2002/esp.train", mirror).decode("latin-1")
    efe = [
        " ".join(line.split()[0] for line in block.splitlines() if line.split())
        for block in train.split("\n\n")
    ]
    write_source(out, "es", "es_news_efe", efe, limit, avoid)
    gsd = ud_text(
        "UniversalDependencies/UD_Spanish-GSD",
        ["es_gsd-ud-dev.conllu", "es_gsd-ud-test.conllu"],
        mirror,
    )
    write_source(out, "es", "es_web_gsd", gsd, limit, avoid)
    english(out, "es", limit)
    expected(out, "es", {"conll2002_esp": "es_news_efe"})


def thai(out: Path, mirror: Path, limit: int) -> None:
    text = show("wannaphong/thai-ner", "model/1.3/data.conll", mirror).decode()
    blocks = [b for b in text.split("\n\n") if b.strip()]
    write_target(out, "th", "thainer", "\n\n".join(blocks[-3000:]) + "\n")
    avoid = conll_sentences_text("\n\n".join(blocks[-3000:]))
    rest = [
        "".join(line.split("\t")[0] for line in b.splitlines() if "\t" in line)
        for b in blocks[:-3000]
    ]
    write_source(out, "th", "th_news_thainer", rest, limit, avoid)
    social = [
        line
        for name in ("neu.txt", "neg.txt", "pos.txt")
        for line in show("PyThaiNLP/wisesight-sentiment", name, mirror).decode().splitlines()
    ]
    write_source(out, "th", "th_social_wisesight", social, limit, avoid)
    pud = ud_text("UniversalDependencies/UD_Thai-PUD", ["th_pud-ud-test.conllu"], mirror)
    write_source(out, "th", "th_pud", pud, limit, avoid)
    english(out, "th", limit)
    expected(out, "th", {"thainer": "th_news_thainer"})


BUILDERS = {
    "ko": korean,
    "th": thai,
    "vi": vietnamese,
    "ar": arabic,
    "nl": dutch,
    "zh": chinese,
    "ja": japanese,
    "de": german,
    "es": spanish,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=MIRROR)
    ap.add_argument("--out", type=Path, default=Path("/work/extdata"))
    ap.add_argument("--langs", default=",".join(BUILDERS))
    ap.add_argument(
        "--source-lines", type=int, default=30_000, help="lines kept per source (sampled)"
    )
    args = ap.parse_args()
    for lang in args.langs.split(","):
        print(f"== {lang}")
        try:
            BUILDERS[lang](args.out, args.mirror, args.source_lines)
        except (subprocess.CalledProcessError, KeyError, OSError) as exc:
            print(f"  {lang}: not built ({exc})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
