Muž v oranžové čepici zírá na něco.
Středník běží na zelené trávě před bílým plotem.
Dívka v karate, která má klacek s padákem před kopou.
Pět lidí v zimních bundách a helmách stojí ve sněhu, v pozadí jsou sněhem s sněhem.
Lidé opravují střechy.
Muž ve světle zbarveném oblečení fotí skupinu mužů v tmavých oblecích a čepicích stojí kolem ženy v šatech.
Skupina lidí stojí před mikrofonem.
Chlapec v červené uniformě se snaží chytit v modrém dresu, zatímco se snaží chytit míč.
Muž pracuje na budově.
Muž v vestě sedí na židli a drží časopis.
Matka a její mladá dívka si užívají krásný den venku.
Muži hrají volejbal, jeden hráč, který má na sobě za ruku v vzduchu.
Žena drží misku jídla v kuchyni.
Muž sedí u stolu v jeho domě.
Tři lidé sedí v jódách.
Dívka v džínových šatech jde po špinavé poutre.
Blondýna drží ruce s mužem v písku.
Žena v šedém svetru a černé kšiltovce stojí v řadě v řadě.
Člověk v pruhovaném triku leze po hoře.
Dva muži předvádí výrobky, zatímco žena se dívají.
Lidé stojí před budovou.
Teenager hraje na trumpetu na hřišti.
Žena dělá salto na trampolíně na pláži.
Muž stojí u skupiny video hry v baru.
Žena používá vrtačky, zatímco jiný muž fotí.
Žena v růžovém svetru a zástěře čistí stůl s můžem.
Muž krájí kus stromů.
Skupina asijských chlapců čekají na maso na grilu.
Ženy v tradičním oblečení, kteří mají na sobě tradiční záchranné vesty.
Jeden muž drží hlavu jiného muže a připravuje se do obličeje.
Šest lidí jede na horském kole skrz džungku.
Dvě blonďaté dívky sedí na římse na zalidněné náměstí.
Dítě cáká ve vodě.
Tři lidé sedí u piknikového stolu před budovou, který má na kterém je na kterém je malbu.
Tři chlapci stojí na molu v plavkách.
Dělník podává ženu tašku, zatímco si prohlíží rybu na ledovém trhu.
Krásná žena si hraje na čikikě.
Šéfkuchařský budovy, který je v uniformě, se dívá na kameru z plotu.
Mladá žena se dívá na pizzu.
Muž bez trička v šortkách rybaří, zatímco stojí na kamenech.
Dívka v záchranné vestě se brodí vodou.
Muž v uniformě a muž v modrém triku stojí před dodávkou.
Lidé sedí uvnitř vlaku.
Dítě se houpe s nohama ve vzduchu.
Muž v červeném triku do obchodu.
Dva muži v plavkách skáčou do vzduchu na opuštěné pláži.
Batole vaří s dalším člověkem.
Otec a dvě děti pracují venku na zahradě a pracují na trávě.
Muž vaří jídlo na sporáku.
Muž v džínách si hraje na pláži s červeným míčem.
Lidé jdou po chodníku vedle řady obchodů.
Wakeboarder předvádí salto, zatímco je na vysokém svahu.
Velká skupina lidí naplňuje ulici.
Muž v řadě jde do vody.
Žena v džínách jde kolem autobusu s nápisem, která se dívá na ženu, která se dívá přes sluneční brýle.
Muž v růžovém triku sedí v trávě a míčem ve vzduchu.
Auto zaparkovaná na pláži.
Dva muži v černém stojí ve městě.
Muž ve žlutých kalhotách zvedá ruce.
Dva muži v kloboucích a používají klacky jdou poblíž vody, zatímco jsou v každé.
Skupina roztleskávaček předvádí představení na židlích.
Chlapec si hraje s dospělým dospělým na ně dívá.
Dav lidí se baví v parku.
Muž sedí na lavičce a drží svého psa a dívá se na vodu.
Chlapec a jeho mladší štěňata si spolu hrají na hřišti.
Žena v modrém se dívá do černé tašku, zatímco sedí na lavičce během slunečného dne a lidé prochází za ní.
Hnědý pes stojí na písečné pláži.
Žena sedí s košíkem, obklopený látkou.
Muž griluje na zahradě.
Žena zpívá v klubu s guitariste za ní.
Kytarista hraje v noci na červenou kytaru.
Dítě sedí na trávě a dívá se do fotoaparátu.
Dvě ženy a tři muži se dívají na oceán.
Umělec s housle hraje na ulici, zatímco žena s modrou kytarou se dívá.
Mladá dívka plave v bazénu.
Několik dětí se připravuje venku na hračce.
Tři teenageři v metru hrají kolem.
Hnědý pes jde po trávě s vyplazeným jazykem.
Lidé sedí v trávě před budovou a fotí.
Muž bez trika se dívá do dálky, zatímco tři žena prochází kolem kavárny.
Dva mladí chlapci používají ovoce na kole.
Muž v černém triku, kšiltovce a džínách hraje na bubny na žlutém pláži.
Mladá umělec maluje obrázek ženy na zdi.
Dvě členky týmu týmu týmu týmu skáčou vysoko obklopen dvěma dalšími ženami.
Muž míchá hrnku v kuchyni.
Chlapec wakeboarduje na jezeře.
Muž pracuje na sporáku.
Velká skupina lidí různého věku a vále sedí venku.
Blonďatá žena lije nápoj v baru.
Malé dítě v modro-bílém triku drží šťastně žlutou plastovou plastovou plastovou plastovou plast.
Žena s růžovými vlasy v černém mluví s mužem.
Muž v japonském obleku připravuje jídlo na dva lidé.
Dívka skáče přes řeku, z kamene.
Dělník s koněem klečí vedle dvou žen.
Starší muž otevírá paži a dívá se do ruky.
Dítě v bílém karate cvičí představení.
Tři muži v stejných barevných vestách jsou venku.
Žena fotí miminko v růžovém klobouku, zatímco muž nese.
Skupina podobných asijských dětí sedí na dřevěné židlích.
Mladý chlapec v fotbalovém dresu brečí do palmy.
Šťastná žena se připravuje v kavárně.
Dělník řídí těžké vybavení na staveništi.
Žena běží po softballovém softballu, která je připravená k nohou.
Muž v pracovním oblečení prochází kolem koně, aby další člověk.
Skupina lidí leze v chladném dni.
Horský pes se chystá dolů po hoře s modrou helmou.
Muž dělá stojku na vrchu kulatého sochy.
Dítě sedí u stolu a drží papír u obličeje.
Hnědý pes se brodí do jezera, aby chytil klacek.
Matka učí své dva mladí chlapci z kamenitého vody.
Malé dítě jde vedle červených lampy.
Dívka sedí na kole s mladým chlapcem, zatímco další dívka fotí.
Černý pes si dává míč ve vodě.
Muž v bílých kalhotách a modrém triku kope žlutou tašku.
Dva Indické muži se účastní cérémonie.
Chlapec s roztaženým nosem a píše na své ruce stojí v video obchodem.
Dva lidé pádlují na kánoi na oceánu během západu slunce.
Lidé stojí v přeplněné metru a platformě je venku před oknem.
Muž leze po zdi s ohněm v ruce.
Dva hnědí psi běží sněhem.
Na pódiu hraje na malý kapela na hudební kapely.
Dítě v Noël se dívá do fotoaparátu.
Muž sedí vedle počítače.
Tato žena má malbu a směje se.
Lidé uvnitř budovy, jeden fotí.
Čtyři bílí psi s náhubky skáčou přes červenou zeď.
Žena v modrém triku drží miminko.
Dva lidé sedí na pruhovaném pláži na vodě.
Stará žena pracuje na tkalcovském stroji.
Chlapec stojí v popředí a dívá se přes ostatní lidé na hřišti.
Muž v modrém kabátě se natahuje na rameno malého chlapce.
Tři hnědí psi skáčou na ženu v modrém.
Chlapec visí z taxíku.
Muž v šedém triku skáče přes vrchu písku v poušti.
Dítě ve žlutém triku skáče nahoru a dolů.
Pracovník ve žluté bundě pracuje na budově.
Muž v Brollé zástěře mluví s mladým dospělým.
Skupina pivo táboje na baru s vánočními světly na stropu.
Muž jde po útesu nad oceánem.
Muž v černém jde ke svého nákladního auta ve sněhu.
Zelená terase skáče po míči.
Policista v kšiltovce a tmavomodrém dresu se usmívá, zatímco má na sobě sluneční brýle před obchodem.
Rodina jde po procházce v parku.
Muž v zelené helmě a žluté vestě se mračí.
Dítě s růžovým potem tančí na hlavě obklopenými balónky.
Pes s nosem je na něčem na břehu.
Muž připravuje své stánku na chladném dni.
Muž v červeném triku se chystá jí do díry.
Mladá žena v bílém drží tenisovou raketu.
Chlapec v červeném triku kope do písku s žlutou lopatou.
Člověk v růžové bundě na dřevěné lavičce.
Muž v bílém triku se dívá z okna kovového domu.
Žena drží malou bílou sochu.
Šest dětí bez trika si hraje ve vodě a cáká.
Dva lidé jedou na kolech po horské dráze.
Dívka přeskakuje provaz na chodníku poblíž garáže.
Muž v oranžovém triku a helmě.
Malý chlapec si hraje s plastovými látkami a zvířaty s dospělým se dívá.
Malá dívka otevírá vánoční dárek.
Žena v modrém obsluhuje foťák před dvěma dalšími ženami.
Malá dívka se snaží udělat na opuštěné pohovce.
Hnědo-černý pes běží po cestě v lese.
Dva psi si hrají u stromu.
Modrý pes v černém kabátě a kalhotách jde po schodech a usmívá se na psa.
Dva muži v zeleném připravují jídlo v restauraci.
Muž oblečený v černém kožené bundě a kovbojském klobouku jde kolem Ry.
Pes běží venku s žlutým hračkou.
Pes v bundě běží ve sněhu.
Rodina si hraje na pláži s svým psem.
Žena a dítě se objímají, zatímco dítě se dělí o něčem.
Dva muži a žena stojí venku.
Skupina mužů používá kládu, aby chytil loď z vody.
Muž pije z sklenice, zatímco čte noviny.
Muž oblečený v černém a hraje na piano.
Mladý chlapec v modrém dresu a žlutých šortkách hraje fotbal.
Muž stojí na kamenné stavbě s rukama jako pták.
Pes pije vodu venku na trávě.
Dvě ženy v tílku se dívají do fotoaparátu.
Muž sedí na židli s holýma vlasy a připravuje se na to.
Malé dítě v zelených botách si hraje v bahnité louži.
Muž používá motorovou pilu, aby se dostat.
Muž sedí u piknikového stolu s šátkem a je ozdobené pivo před ním.
Chlapec v černém triku a modrých džínách drží červený míček.
Tmavovlasý muž v brýlích a triku sedí na trávě.
Pes běží na dráze.
Tlustý muž má na sobě tribuny na balkóně.
Dva Německý ovčák se perou na sebe.
Toto je skupina lidí stojící na nějaké události.
Hnědo-bílý pes chytá hračku.
Muž s bílými vlasy hraje na akordeon uprostřed budovy.
Žena s hnědými vlasy sedí na lavičce před kavárnou.
Muž vedle kola hraje na flétnu.
Dvě děti balancuje na kládě a drží provaz.
Muž jede na motorce předvádí trik na dráze.
Mladá žena s fialovým látkou odpočívá na dřevěné palubě.
Žena v hnědém triku sedí na jasně červené lavičce.
Pes jde na kládě přes malou řeku.
Mladý muž v bílém triku a zelených šortkách stojí na trubku.
Skupina lidí je všichni pokrytými deštníky.
Muž s obrovským nápisem je na svém kole.
Muž hází kládu do vody, zatímco dva psi se dívají.
Skupina balvanu hraje na nástroje pod stanem u vody.
Pohled na rušné ulici.
Mladá blond žena drží bílý provaze za slunečného dne.
Dva lidé v modrých tričkách jsou venku s býkem.
Černý pes vylézá do bazénu.
Kovboj jede na zádech na koni v soutěži.
Závodník na železniční trati.
Pracovník v oranžové vestě používá lopatu.
Dva stavební dělníci mají diskuzi, zatímco pracují na staveništi.
Tři muži jdou po kopci.
Asiatka v květovaných šatech pózuje na mostě blízko ní.
Mladý muž stříhá svou kytaru v kuchyni.
Tři chlapci si hrají s kbelíkem a kbelíkem vody.
Tři dělníci pracují na chodníku.
Lidé se brodí v lese vedle kánoe.
Sbor je shromážděna v kostele.
Skupina mladých dospívajících skáče v noci a dělá na kameru.
Dva muži jedou na kajaku, jeden v modrém, jeden v potoce.
Dva pracovníci na betonovém budově.
Žena v červeném svetru a džínách sedí s rukama na obličeji.
Dva pouliční umělci si dávají ohromady před publikem, který se dívá na něj.
Sedící a čeká na letišti.
Muž ve žluté bundě odhazuje oheň, chlapec v paru sleduje.
Muž a chlapec na kamenné pláži.
Žena na lodi s nápisem "SSS" se pohybuje v vodě.
Chlapec sedí a dívá se z mikroskopu.
Mladá dívka v růžových šatech skáče venku.
Mnoho lidí sedí okolo stanu venku.
Mladý v černém triku, který je napsáno "S""" hraje na buben.
Muž prodává věci poblíž silnice na velké hory.
Dívka ve žlutém se směje na holčičku v oranžovém, zatímco je pozoruje dívku v modrém.
Pes skáče přes překážku venku.
Pes s černým obojkem se válí v hlíně.
Dva hnědí psi si hrají v tlustém mužem.
Muž s knírem a vousy drží jídlo, který má na kterém je z nich.
Muž, který má na sobě šklekleklebí oblečení, je v ringu.
Muž v černém triku rybaří na kamenité břehu.
Dva psi jsou na nosy.
Dva muži se zastavují na chodníku, zatímco auto prochází kolem.
Číšník sedí a čeká na zákazníky.
Závodní auta s školní autobusem za nimi.
Dvě ženy v podobných tričkách jdou k levé ruce.
Malé dítě v oranžové záchranné záchranné vestě drží modrou kajaku v vodě.
Lidé jdou po cestě v parku plné parku.
Tři mladí dospělí mluví v davu lidí, žena se dívá.
Žena a dítě venku před dveřmi, které jsou na které jsou v prázdném domě.
Černo-bílý muž a jeho dvě bílé kamarádi dávají své hlavu blízko.
Dívka v maskáčových kalhotách sedí na vrchu Mu.
Světle hnědý pes běží.
Chlapec pózuje s velkým zelenou v nose.
Plešatý muž vyfukuje vysoko, zatímco jeho hnědý pes skáče.
Dav na rušné ulici.
Pes s náhubkem ve žlutém a černém běží po dráze.
Muž v sandálech sedí na chodníku poblíž tašky.
Muž a žena sedí na metu a povídají si.
Dítě se dívá na kávu v obchodě.
Muž pije z žlutého kelímku kolem lidé na rušné události.
Chlapec se opírá o auto s květinami na hlavě.
Žena v květovaných šatech mluví s dětmi před dodávkou.
Muž na své svatbě.
Mladá žena v černém triku a džínách zametá.
Žena s kloboukem leze po útesu poblíž velkého vody.
Velký černý pudl běží po trávě s hračkou v tlamě.
Chlapec v šortkách dělá skateboardový trik.
Malý chlapec v červených kalhotách stojí na ulici.
Žena píše na telefonu a obklopenými deštníky.
Osm mužů hraje na pódiu na hudební nástroje, s kytarem ve světle světlo.
Muž v oranžové kombinéze a stejným přilbou pomáhá modrou hadicí.
Muž a dvě dívky předvádějí rybu, zatímco drží rybářský prut před vodou.
Muž v červeném triku sleduje psa na překážkové dráze.
Chlapec v červeno-bílém plavkách skáče dozadu v krásném bazénu.
Asijská žena vystrkuje vlasy.
Starší žena a malé dítě v růžovém triku si hrají s barevnými dráhou.
Malý černý pes skáče přes překážky.
Hnědovlasý muž v zeleném triku hraje na trumpetu.
Muž mluví do telefonu s nohama.
Skupina dětí sedí na modré podložce, zatímco jí jídlo.
Černý chlapec sedí v písku.
Malý pes sleduje dva velkého psy, kteří si hrají na poli.
Lidé sedí v kruhu před velkou budovou.
Jeden pes skáče, aby chytil softball, zatímco druhý se dívá.
Blonďaté dítě se houpe na houpačce.
Jeden muž a dvě ženy mají diskuzi nad bílým vinem.
Asiat vaří venku jídlo.
Hnědý pes se chystá chytit zelenou frisbee.
Vidididíme kapela, zatímco hraje píseň.
Mladý chlapec stojí vedle písečné sochy s pitím.
Tři malé děti jdou po travnaté zahradě.
Muž je na čokoládu umění na vozíku.
Muž na kole jede na hoře.
Chlapec v modro-žlutých botách běží po hlíně.
Žena v oranžové bundě sedí na lavičce.
Muž dělá trik na skateboardu.
Muž v uniformě bojového umění ve vzduchu.
Žena prodává tašky na chodníku.
Dva fotbalové týmy jsou na poli.
Dítě v modrém triku skáče z lavičky.
Brankář ve žlutém poli sbírá branku.
Skupina mladých lidí si dává v mexické prostředí.
Mladý muž jede na skateboardu z růžového zábradlí.
Mladý chlapec skáče z kmenového posteli na malém posteli.
Dva lidé ve zvláštních kostýmech, jeden v modrém a fialové stojí na silnici.
Muž, který běží v modrém triku s číslem je připravená.
Asijský dělník pózuje na kameru.
Muž, který vypadá jako běloch běží maraton a ukazuje 2 ukazuje.
Basketbalista střílí na branku během zápasu.
Hráč amerického fotbalu v oranžové uniformě se usmívá a drží fotbalový míč.
Dva skateboardisté na skateboardu na kolotoči, zatímco ostatní sledují.
Tým v bílo-or zlatém na kraji fotbalového hřiště.
Malá dívka tlačí své koloběžce přes travnatý stromy.
Skupina asijských dětí v bílých tričkách a čepicích vystupují s davem a dívá se.
Chodci jdou po ulici a dívá se na dítě v kartonovém krabici.
Hnědý pes běží po písečné pláži.
Dva muži v uniformách stojí vedle ženy.
Středník s nápisem při tomtototo, kde jsou váleččččně, a vlajkami.
Cyklista skáče do překážky.
Pár sedí na bílých židlích a smějí se do fotoaparátu.
Malé děti jsou na malé vlak.
Surfař v modrých plavkách jede na vlnách.
Chlapec skáče na jeho fotbalový hráč.
Dva mladí muži na fotbalových týmy závodí na fotbalovém hřišti.
Lidé jdou po dlážděné svahu obklopený čínskými prodavačky.
Mladý chlapec v bílých kalhotách skáče z gauč.
Chlapec v oranžovém triku lije Lego ze tašky.
Žena v hnědých sandálech a modrých džínách, v bílém triku drží miminko pod velkým stromem.
Tři lidé se smějí a drží politické cedule.
Policista stojí vedle auta na městské ulici.
Dva muži v kloboucích.
Chlapec ve vzduchu se snaží kopnout do fotbalového míče.
Mladý chlapec s modrou čepicí má hlavu.
Červenovlasý muž s dredy sedí a hraje na akustickou kytaru.
Muž jí sendviču s jeho dcerou na klíně.
Africké dítě drží něco, který je na fotce.
Žena si prohlíží dav lidí s mládkou.
Sedící diváků sleduje, zatímco policista v obleku a muž v obleku drží misku ovoce.
Dav otevírá dárek v baru.
Dívka v bílém a dívka v zeleném jdou kolem modrého auta.
Muž používá elektronický vybavení.
Člověk surfuje na vlně v oceánu.
Voják kontroluje něco.
Nevěsta a ženich se líbají pod svatebem.
Modrý policista stojí v pozadí, zatímco mladý muž s červenou šálou jde po obličeji.
Černo-bílý pes skáče přes strunový míček na soutěži.
Žena v svetru čte knihu v kuchyni.
Několik dospívajících se dívá přes zábradlí v tmavém pokoji.
Muž v bílém triku se chystá na skálu.
Puberťák se protahuje v kuchyni a jablko.
Lidé drží různé bubeny na různé bubny.
Tři opačníci na poli na poli.
Dvě ženy a muž se dívají na knihu.
Tři děti jsou otočenými nohama, zatímco stojí u čokoláda.
Kuchař pózuje na kameru, zatímco vaří.
Mnoho lidí protestuje na ulici, který použítuje sklenici v květinových rostlin.
Puberťák skáče na kopci se svým kolem.
Malá dívka běží na břehu pláže.
Bílý kachna své křídou ve vodě.
Dva muži vypadají, že mluví, zatímco stojí před dodávkou a za nimi stojí čtyři lidé.
Žena v růžové sukni drží miminko.
Hokejový hráč ve žlutém dresu je na brankář.
Muž jde kolem velkého nápis, na kterém je napsáno "EE.
Tři chlapci v zelených tričkách a hnědých kalhotách pózují na vrchu skluzavky.
Muž tancuje s psem mezi nohami.
Bílý pes běží v mělké vodě.
Opravní výrobky pochodují s kapelou.
Skupina dětí si spolu hrají na oploceném zahradě, zatímco dospělý se dívá.
Skupina žen hraje na hudební nástroje.
Malá dívka ve fialové kostkovaných šatech leží na podlaze.
Muž s roztaženými vlasy si holí vousy.
Dva černí psi, černý štěň a bílý pes ve sněhu.
Muž v basketbalovém dresu skáče na střelu.
Žena sedí před svým domem s modrou dveřmi a užívá se ve vzduchu.
Děti sedí na muže v kovbojském obleku.
Bílo-bílý pes skáče přes vodu v písku.
Dav je shromážděna kolem vody v dešti.
Několik starších mužů, někteří mají na sobě tradiční čelenku na rohu ulice.
Mladý pes se dívá na psa ve sněhu.
Fotbalista v zlatém dresu hází míč od protihráče.
Žena v černém triku šije s fialovým pravou.
Čtyři ženy asijského původu mají na sobě zlatou šaty, zatímco vystupují balet.
Člověk hraje na elektrickém nástroj.
Dívka v černém sportovním oblečení s číslem 1193 běží přes trávu.
Dítě s padákem má na sobě číslem 533.
Starší pán a mladá dívka spolu pracují na puzzle.
Shromady filmuje malého afrického chlapce ve žlutém triku.
Pouliční dopravní most s cyklistem a nějaké auta.
Muž jede na býkovi v býkovi.
Chlapec skáče do tenisového míče s raketou.
Děti zírají zeď, zatímco dva další lidé sledují.
Lidé jdou požárním táboji s palmami v pozadí.
Malá dívka kope do černého předmět na karate.
Dva muži se snaží zvednout z vody na chodníku z pneumatiku.
Dva muži tančí breakdance, s davem se dívá.
Profesionální žena stojí na pódiu a povídají si něco.
Žena leží na gauči a směje se.
Zrzavá podlaze je u bílé a jedna černý žena.
Hráč skáče plot.
Tři psi si spolu hrají na poli.
Dvě malé děti jsou na písku.
Usmívající se chlapec si hraje v listí mezi kachny.
Tito čtyři lidé stojí venku, s 3 psy.
Zatímco mohlahlahlahlahlahlahlahlahlahlahlahlahlahlahlahla se na ně dívají.
Dívka v tričku má na sobě tričko a otevřenou pusy.
Skupina kmenů naplňuje vodu v poušti.
Muž stojí na městské ulici.
Slunce ptáků se brodí s jídlem v jejich kotě.
Dva muži jedou na farmářském traktoru, zatímco jejich následována.
Dva lidé stojí na vrcholu hory.
Mladá dívka si užívá, zatímco dělá sníh.
Tři muži se usmívají na kameru a ukazuje své stínky.
Člověk píše na tabuli v prázdném třídě.
Muž v černém triku sedí u stolu s otevřeným laptopem před ním.
Čtyři lidé relaxují na travnaté kopci s výhledem na kamenitý.
Chlapec s skateboardem skáče do vzduchu podél zábradlí.
Muž v oranžovém triku hraje tenis.
Pes s červeným obojkem si dává zuby na psa s modrým obojkem.
Chlapec si užívá letadlo.
Dělník v oranžovém pracuje a kontroluje kus stroje.
Muži v kovbojských čepicích stojí u rodeu.
Dva psi jsou ve sněhu a jeden má něco v tlamě.
Dělník si dává pauzu z pracují na pití.
Béžový pes běží za bílým psem a drží žlutý hračku.
Hokejista v bílém dresu s klackem.
Muž v bílém triku s zlatým nápisem hraje s prknem.
Černý kůň strká hlavu skrz plot a snaží se na trávě.
Tlustá žena předvádí své ruce, že kouří.
Dva muži a dívka se smějí.
Dítě se opírá o výstavu z modro-žlutého plastového plastu, zatímco dospělý se dívá.
Černo-černý pes jede na sněhu na sněžném míči.
Mladá dívka stojí vedle žluté chat na kuchyňském pultu.
Dvě děti si hrají na hřišti.
Tenistka v zeleném pruhovaném triku drží ruku do pusy.
Chlapec v červeném obleku si hraje ve vodě.
Dítě v červené bundě a kšiltovce drží velkou kočku sněhu.
Dva policisté v oranžových bundách stojí před bílým stanem s diváky.
Dva lidé stojí vedle stromu na zemi.
Dva muži sedí u kamenné budovy.
Bruneta s brýlemi drží blonďaté dítě v červeném svetru a žlutých botách.
Černo-bílý pes si hraje s bílým míčem.
Dva lidé se líbají na chodníku před kbelíkem, zatímco lidé prochází kolem.
Žena hraje volejbal.
Dva velcí psi zápasí na prašné hřišti.
Hnědý pes skáče přes překážku.
Muž v pruhovaném triku kouří cigaretu na ulici.
Malá dívka drží malého chlapce na klíně.
Muž se snaží na velmi býkovi na krásném místě.
Děti se perou o hodil míč.
Cyklista se naklání na horském kole kolem země na prašné trati.
Dva lidé a krávy jsou v domě.
Mladý chlapec se učí, jak jede na kole se svým synem.
Chlapec v červeném triku a černých šortkách zametá zatáčku.
Afroameričan stojí před nějakými domy.
Muž hraje na nástroj vedle stromu.
Dvě ženy drží za ruce nad stolem a smějí se do fotoaparátu.
Potet hnědý pes jde po trávě.
Basebalový hráč v černém triku právě odpálit hráče v bílém triku.
Žena drží velký děti na jídlo.
Dva psi, jeden s tenisovým míčkem v tlamě, běží vysokou trávou.
Dva dospělí a dvě děti sedí na lavičce v parku.
Žena na travnatém poli fouká na dátku.
Muž prodává karty, aby se skupinou lidí.
Skupina lidí na ulici se shromažďuje na akordeon.
Muž sedí na lavičce a zvedá své iPod.
Starý muž v metru má na sobě těžké oblečení a čte noviny.
Starší muž v brýlích připravuje maso.
Muž předvádí trik na kole, který stojí na kole a je na kole.
Muž je na pláži a dělá písek.
Několik lidí v parku jí u piknikového stolu.
Dvě ženy jsou u stromu v nějaké staveništi.
Kovboj v rodeu se snaží dostat, jak se snaží mobyšit.
Pes skáče skrz překážku.
Obézní žena s dlouhými černými vlasy v růžovém triku s jmenovkou.
Muž opravuje malou holčičku.
Dvě dívky v podobných sukních tancují před nějakými muzikantmi na ulici.
Žlutý pes nese klacek u vody.
Dívka v svetru se natahuje na slunci.
Rockové koncertu je na místě.
Tři ženy v jasných barvách a rukavicích drží karty.
Hnědý pes kope v hlíně.
Mladý chlapec v bílém pruhovaném triku a čelenku drží tenisovou raketu.
Dva psi běží z fotoaparátu v lese.
Dívka si hraje v kašně v kašně.
Tři mladí sumo sumo zápasisté stojí a poslouchá se.
Dva turisté zkoumají kládu vedle lesa.
Tři hráči vybírají protihráče na zemi.
Dva chlapci přechází ulici, zatímco kope do červeného fotbalového míče.
Muž drží jiného s zády.
Bílý pes na hoře se otáčí na něco v pozadí.
Chlapec jede na skateboardu na skateboardu.
Dlouhovlasý muž hraje na piano.
Tři atleti drží kočky stojí na pódiu.
Dva plešci v červených šatech.
Mladý chlapec visí na oblečení.
Malá dívka v růžovém drží v baru.
Muž v zeleném skáče na své motorce.
Žena si hraje s dvěma malým chlapcem v parku.
Čtyři lidé hrají fotbal na pláži.
Dvě teenagerky se objímají, jeden má na sobě helmu, s cyklistem v pozadí.
Dva špinavý psi běží sněhem.
Žena stojí na zeleném poli, drží bílý pes a ukazuje na hnědého psa.
Žena s obrázky na venkovním trhu.
Dva lidé sedí u stolu před zdí a dělají obličeje.
Dva muži s piercingem se smějí.
Dítě leží na béžovém koberci a směje se.
Muž a žena sedí a jsou v ruce.
Dvě ženy zápasí v bazénu.
Muž v bílém triku jde s nápojem v ruce.
Dva lidé jsou u jezera, kteří jsou pomalovanou oblohou.
Několik lidí sedí u stolu ve formálním oblečení.
Dvě dívky (nně oblečené v modrém, jeden v růžovém) závodí na kolečkových bruslích.
Čtyři lidé sedí na hromadě kamenech.
Skupina lidí dělá triky na motorkách.
Cyklista v cyklistickém vybavení jede lesem.
Muž v zeleném triku jde po pláži a nese boty.
Několik mužů stojí kolem auta.
Dva muži pracují pod kufrem bílého auta.
Děti skáčou z břehu do bazénu.
Muž na okraji zdi, který se chystá spadl.
Žena v pruhovaném oblečení na kole.
Dívka v černém pózuje na kameru.
Muž v šortkách stojí u vody.
Čtyři černí muži sedí na schodech kostele.
Fotka obsluhuje hromadu z odpadků.
Gymnastka v červeno-bílé je uprostřed baru.
Starší žena v zeleném svetru sbírá zeleninu.
Dva muži kupují věci v dílně s nástroji.
Učitel v bílém a malá dívka ve žlutých šatech si hraje s nápisem.
Malé dítě spí v posteli s otevřeným knihu na hru.
Žena jí v trávě na krásném dni.
Muž jde po dlážděné ulici vedle světlehnědého budovy s červenými u sebe.
Žena v klobouku s chlebem.
Osamocený žena používá velkou pásku a z nich stojí na poli.
Muž v karate předvádí před dvěma židlí.
Muž ve formálním oblečení hraje na piano na chodníku ve městě.
Starší muž sedí na židli a jí nějaké pití.
Žena v bílém triku pracuje za pultem v kavárně.
Muž s oblečením stojí na zádech nákladního auta.
Dvě děti se dívají na koních skrz malou plot.
Různí okno s nějakým motýlky na ní.
Žena ve světle růžovém kabátě dělá obličej, která má na sobě fialové bundu, zatímco stojí před nápisem "S.
Kovboj krájí ruku s kapelou.
Muž ve žlutém triku a muž v tmavě modrém triku mluví.
Tři asijští děti sedí na gauči s potem v pozadí.
Dívka v červeném triku skáče do tenisového míče.
Muž pózuje do fotoaparátu se zeleným Kranem.
Muž se usmívá v restauraci s dalším člověkem.
Muž nakopává krabici s mnoha pivem.
Muž v černé bundě hraje na kytaru ve veřejném prostranství.
Skupina tančí v průvodu.
Muž stojí na kamenité útesu a dívá se na vodu.
Policisté sledují ženu z autobusu.
Dva policisté středního věku sledují parkoviště v noci.
Dva muži v modrých tričkách se dívají na fotbalový zápas.
Skupina mužů v modrých uniformách stojí spolu.
Mladá žena dělá jógu na pláži.
Velký dav lidí stojí v parku a několik hudební nástroje.
Muž s balónem dělá balónek.
Muž griluje maso na venkovním grilu.
Dva muži prodávají ovoce na trhu ovoce.
Bruneta v bílých bikinách lije nápoj do muže.
Chlapec ve slunečních brýlích běží za pouti.
Žena v rukavicích drží něco, co vypadá, že je otočený o kládu.
Muž v kostkované košili ukazuje z černé rukavicích.
Dva muži v bílé plastových židlích sedí v dveřích.
Mladá dívka v červených šatech má na sobě černou kovbojský klobouk.
Muž v červeno-bílé fotbalovém dresu stojí na poli a skáče s modrým míčem.
Lidé skáčou přes horu na provaze.
Lidé se dívají, zatímco soutěží v maratonu.
Lidé na počítači před velkým oknem.
Žokej na rušném místě pracují a světly na něj.
Muž v rukavicích nese kukuřici skrz pole.
Obrázek zrcadla od zrcadla.
Tlustá žena drží balónky na akci.
Žena sedí ve středním věku s kočky a dvěma kočky.
Žena sedí u cihlové zdi uvnitř budovy.
Tři mladé ženy sedí na červených židlích.
Žena v modrém triku jde v vesnici.
Šest dětí sedí na schodové schod a píše.
Béžový pes si hraje s klackem na pobřeží.
Dva psi se perou na třetí psa, který má vyplazený hračku.
Dítě na motorce se usmívá.
6 lidí je shromážděna kolem, aby jí velký večeři.
Père Noël je fotografovánovánovánována.
Vojáci pochodují v dešti v New York.
Žena v modré helmě a červených kalhotách jede na motorce.
Několik mužů v uniformách bojových uniformách vystupují na nějaké aktivně.
Mladá žena a muž oblečený v kostýmu s klacky v pozadí.
Muž v uniformě jde po ulici s dvěma auty a stromem.
Mladá žena leze po skalní stěně.
Starší muž ve světle modré bundě pracuje na kraji silnice.
Lidé se dívají přes několik barevných kus papíru na stole.
Muž zpívá a hraje na kytaru do mikrofonu.
Dva muži sedí v restauraci.
Dvě ženy v šortkách běží po pláži podél vody.
Stavební dělníci mají diskuzi na trati.
Pohled výhled na basu, který má na sobě černé bundu a bílé čepici, stojí uprostřed nich.
Skupina lidí si hraje na předmět.
Malá dívka v modrém oblečení leze po kovové zábradlí na ulici.
Skupina mužů sedí a mluví za nějakými zelenými ovocem.
Muž ve žlutém oblečení stojí za mikrofonem pod stanem.
Hnědý pes s fialovým frisbee v tlamě.
Jeden muž cvičí své bojových umění blízko klidné vody.
Žena s nápojem a žena s mobilem.
Dítě v červeném kabátě mává ruku ve vzduchu, zatímco leží v červené sáňkách.
Žena sedí vedle svého kabelku a sleduje psy v parku.
Tři muži stojí na pódiu, jeden má na sobě klaun a drží kytaru.
Žena, která je zdobná květinu v kmenovém vesnici.
Žena v červených šatech tancuje s mužem v obleku.
Dva malí psi tahají většnou psem s tenisovým míčem.
Muž v autobuse a kšiltovce sedí na lavičce v parku.
Afroameričan stojí v zahradě s lesem v pozadí.
Mladá dívka se snaží kartáčem.
Asijské lidé sedí v restauraci s žlutými židlích.
Malá dívka jí sendvič, zatímco sedí na židli a má na sobě kočku.
Šedovlasý muž v černých rukavicích se pohybuje po trávě.
Žena čte knihu, zatímco sedí v řadě červených židlích.
Dítě tleská, zatímco jede na ramenou.
Rodina jde po chodníku ve sněhu, zatímco muž sedí na kraji papíru.
Katze sedí na vrchu obchodu.
Muž v růžovém triku a černé bundě s sluchátky.
Mladý muž se chystá hodit fotbalový míč.
Muž a dívka jdou po lesní cestě.
Žena s růžovými vlasy se ohýbá na chodníku a drží růžový psy.
Muž v obleku drží nápoj v kelímku a jde po chodníku vedle autobusu.
Muž skáče s kamenem v pozadí.
Člověk v červené bundě s černým kalhotami drží igelitový kachny.
Žena si dává ruku na člověka sedí v kolečkovém křesle.
Muž v bílé zástěře vaří na něco v béžové bundě.
Žena s roztaženým kufrem a sluchátky čeká na přechodu.
Skupina mužů jde po ulici ve městě.
Pouliční silnici vedle ozdobného místě s mnoha sloupy.
Skupina lidí v černém stojí na molu poblíž dlouhé konstrukce.
Muž nese několik pivo.
Muž středního věku sedí a hraje na akordeon.
Dívka s zelenou rukou, vlasy, kravatou a roztaženýma vlasy stojí venku.
Mladá dívka v růžovém triku běží směrem k oceánu.
Skateboardista v černém triku a džínách bruslí ve městě.
Muž v bundě fotí velkého budovy.
Lidé na konci fotbalového zápasu.
Na této fotografii je fotografie čtyři rodina na rušné ulici ve městě.
Skupina lidí jde po ulici v slunci.
Pouliční ulice poblíž stánku s několika lidmi včetně muže v hnědém kabátu a slunečních brýlích.
Někteří rostlinami jsou poblíž okna.
Tento hráč s modrou helmou je na pálku a právě právě odpálit míč během baseballového zápasu.
Žena v zlatém kabátě se chystá chytit metro.
Nějací lidé sedí na lavičkách pod stromy před budovou.
Muž v obleku sedí na autobusové zastávce.
Afroameričan obklopený prázdným kbelíkem a tmavou rostlinami se baví na ruce.
Mladá hnědovlasá žena jí a pije něco.
Muž v obleku a klobouku hraje na kytaru na ulici.
Žena v červené vestě pracuje na počítači.
Lidé stojí okolo a jablky v rukou.
Muž používá zrcadla, aby se kravatou kravatou.
Muzikant je obklopeni několika jednotlivců, zatímco šťastně sedí a poslouchá.
Dva mladí muži jedou na velmi malého koně, který je naplně plné pytlích.
Žena v šatech jde po ulici kolem staveništi.
Sedící v chladném obchodě, zatímco zákazníků si kupuje nanáší.
Muž se slunečními brýlemi pracuje na stavbě a vyfukuje štěrk na zemi.
Dítě si hraje s hračkami a dívá se na černou kočku.
Dospívající dívka nese kytaru v lese.
Muž s batohem jde po ulici.
Dva muži si povídají před obchodem v kostýmu s nápisem.
Žena v černém drží něco v tlamě.
Skupina lidí sedí venku okolo malého stolu.
Muž jede na kole nahoru po rampě.
Žena v černém tílku a s náhrdelníkem se dívá do dálky.
Tři mladé dívky jdou spolu po chodníku.
Žena s dlouhými vlasy je v poterie.
Muž skateboarduje na silnici, zatímco jiný muž se dívá z chodníku.
Muž v černém kožené bundě stojí před nápisem.
Muž a žena zpívají společně píseň.
Mladá dívka s kudrnatými vlasy a v bílém topu leží v trávě a drží květinu.
Mladá žena v zelených uniformách předvádí zápas.
Žena vyfukuje na scéně na veřejném místě, za žlutou pásku.
Muž se krčí, zatímco dělá s holuby v pozadí.
Skupina mužů stojí na poli černého míčky.
Rušný den na místním hřišti.
Muž s cigaretou v tlamě opravuje talíř jídla.
Dvě skupiny plavců se brodí.
Lidé sedí na lavičce ve městě, na kterém jsou vystavené věci, včetně lampy a šaty stojí poblíž.
Dělníci jsou obklopeni díru s kbelíkem.
Muž bez trika v černých šortkách stojí na kamenité břehu.
Středník se dívá na něčí.
Lidé hrají kulečník, jeden muž v modrém triku a další ženy jsou v ruce, co jsou na sobě v ruce.
Lidé stojí před sochou obklopený vodou.
Žena se dívá, zatímco muž s roztaženými rukama mluví.
Muž středního věku v bílých šortkách a žabkách se dívá na silnici.
Dva muži v tmavém oblečení a sandálech stojí u velké sochy s reflexy.
Dva lidé jsou v lodi.
Muž a žena stojí na ulici ve městě.
Hasič vychází z metra.
Čtyři muži, tři z nich mají na sobě kšiltovku, sedí na modré podložce.
Toto je velký skupina lidí sedí venku na lavičkách.
Muž v červeném triku jde kolem modro-bílého jídla, na kterém je napsáno "s."
Doktorové vystupují na nějakém operaci.
Starší muž s cigaretou v tlamě a míčkem si prohlíží foťák.
Malý orchestr hraje s otevřenými housle.
Muž v červeném obleku tancuje s ženou.
Dva lidé se dívají v noci na světly ve městě.
Dva motokrosový motorkář v ochranném vybavení, jeden ve vzduchu a druhý se dívá dolů na své motorce.
Několik mužů oblečených v oranžovém se shromažďuje na venkovní události.
Dvě mladé dívky běží po chodníku před cihlovou budovou, na kterém jsou nápisy.
Dva člověk leze nahoru po steilen hoře.
Dítě leží na zemi vedle kočárku.
Pes si dává muže a žena.
Mnoho lidí na trhu se dívá na různé věci.
Dva mladí muži hrají na kytaru na pódiu.
Potetovaný muž lije pivo z láhve do mladého muže.
Dva lidé stojí venku vedle hračky a hračky.
Čtyři lidé jedou na kole po cestě poblíž rušné ulice.
Žena v růžovém triku a s brýlemi.
Žena v červeném triku zvedá ruku, aby přecházející dav pod ním.
Chlapec v bílých šortkách skáče do jezera nebo řeky.
Malá dívka se dívá skrz dalekohled na pláži.
Několik stavebních dělníků v oranžových bezpečnostních vestách kope do země.
Člověk v mikině stojí před budovou a běží.
Stavební dělníci jsou na stavbě proti CDD.
Muž jede na koni s dalšími muži, kteří dělají stejnou za ním.
Afroameričan jde po ulici.
Dva oblaci pózují na fotce.
Žena s neonovými sluchátky píše v dílně.
Žena v zeleném triku mluví do telefonu.
Malý afroamerický dítě nese mladší dítě na zádech.
Skupina lidí sedí na židlích.
Člověk v šátku stojí na ulici před svými věcí.
Orientální člověk v červeném triku a černých kalhotách dřepí přes kabelku na betonu.
Černý pes a hnědý pes s míčem.
Muž v černé vestě drží model.
Muž na poli s letadlem na výhled.
Muž v obleku a kravatě a žena s zavazadly čeká v Londýně.
Dítě jde po chodníku s několika americkými vlajkami.
Černý pes běží po zelené trávě s hračkou v tlamě.
Profesionální auto čeká na své zatáčce na televizi.
Pes se otáčí na trávě, aby se dostat míč.
Skupina studentů sedí a poslouchá kanáší.
Lidé jedou na skútrech po ulici v noci.
Velký šedý oceán a muž na kole.
Muž v oranžovém triku a blonďatý chlapec jede na kole s dalšími lidmi na "S"."
Mladý muž a žena poblíž velké kovové sochy.
Muž s červeno-bílými nádraží na molu.
Muž v černé čepici fotí na rušné ulici.
Muž stojí na rušné ulici a dívá se na hlavu.
Žena v černém má malou holčičku ve žlutých šatech na ramenou.
Skupina lidí na ulici na nástroje.
Zrzavá cyklista je tažený.
Tři lidé jdou po hoře, zatímco jedna žena se dívá do fotoaparátu.
Několik Asiatů v černém oblečení na nějakém stanici.
Žena v červené sukni jde po ulici s graffiti v pozadí.
Zelená gymnastička v modrém a růžovém oblečení předvádí pásku.
Lidé na kraji fontány, žena v bílých šatech sedí na okraji a dívá se.
Muž sedí na lavičce pod velkým stromem.
Tři muži v červeno-bílých tričkách, bílých kalhotách, bílých kalhotách a černých čepicích drží vlajky.
Lidé obdivují umění.
Asijské centr s papírem a chodci.
Tito lidé lezou po schodech na horu.
Malé dítě v modrém oblečení se dívá na nějaké stromy v dálce.
Lidé se dívají na děti s hračkami v obchodě.
Muž s kloboukem hraje na bubny na ulici.
Chlapec stojí s třemi dívek.
Usmívající se muž v batohu drží své věci před chlapcem v brýlích.
Čtyři muži jsou venku a dívají se dolů přes zelenou most.
Žena relaxuje na rukách před lidmi, kteří si užívá modrou vodu.
Dospělý ovčák následuje za běží s ovčákem.
Ojjci a pokládají jídlo v zářivém místě.
Africký muž protestuje proti oblačině.
Policista je na kole a čeká na světlo.
Skupina mužů sedí okolo stolu.
Skupina tří tří lidí, kteří mají na sobě starší muži v parku.
Žena mluví s kamarádem, zatímco jde venku za slunečného dne.
Mladý muž v šedém a černém triku a bílém čelenku.
Dva lidé jedou na motorce s mnoha jezdců.
Dvě ženy ve vojenských uniformách stojí s jinými vojáky v úborech.
Tři dívky se usmívají na fotku.
Žena v černé brýlích s brýlemi a žlutém svetru se dívá, zatímco sedí na hnědé lavičce.
Zrzavá mladý muž pije vodu z fontány jako žena.
Dva muži a žena jdou po ulici ve městě.
Muž středního věku s červenými vlasy a brýlemi drží dítě.
Mladý chlapec v červené čepici jede na koni.
Dva chlapci si hrají na chodníku.
Malá dívka v černém plavkách drží lopatu na pláži.
Starý muž v klobouku a bundě sedí na gauči.
Dva chlapci se dívají nahoru na obloze a mává rukama a jsou oblečeni v oblečení, aby se dostat.
Mladý pár sedí na chodníku a odpočívá spolu.
Mladý chlapec v triku a kravatě se krčí a dává znak.
Tři lidé sedí u stolu venku a pijí.
Chlapec v černém triku a červené čelence visí vzhůru nohama, zatímco další lidé se dívají.
Muž jde před barevným nástěnnou nástěnnou zdí.
Mladý muž jde s dalším mužem, který je otočený na tři dívky.
Muž vyřezává palmu uvnitř kavárny.
Pět lidí jde po schodech u ženy v růžovém triku a hnědé sukni.
Skupina lidí na venkovním trhu.
Dva chlapci jedí své oběd v venkovním prostoru obklopen několika dalšími lidmi.
Žena v džínové bundě jde po chodníku.
Muž řídí čtyři vozík s čtyřmi pasažémi jedou na chodníku před mužem, který sedí na zádech.
Muž v tyrkysovém triku čte noviny.
Chlapec v kočárku má na sobě zelený triko a drží knihu.
Dvě děti sedí u strany, zatímco jedí kočku.
Lidé jedou na kolech na ulici, a mají na sobě helmy.
Dav lidí jede na kolech.
Muž sedí na nástupišti s kole, který je tašek.
Muž na kole jede na kole.
Mladý muž oblečený do barevného, který sedí a kouří cigaretu.
Dva muži v oblecích pod deštníkem a před graffiti.
Starý muž v špinavém triku jede na kole na ulici.
Muž na koni se snaží chytit provaz na mladého býka.
Kovboj se snaží chytit tele, zatímco jede na koni.
Dva cyklisté s helmami jedou kolem prázdného pole.
Muž se opírá o něco tahá z tašky.
Muž v motokrosovém vozíku jede kolem v parku.
Člověk s tetováním se dívá na fotku na kameru, nebo mobilní mobil.
Muž v černém triku a džínách stojí na chodníku a dívá se do fotoaparátu.
Chlapec a dívka stojí spolu na chodníku a dívají se na předmět.
Několik lidí v modrém oděvu a jedna v sukni a černé blůze.
Žena a pes sedí na bílé lavičce poblíž pláže.
Dvě ženy jdou v hlíně před velkou budovou.
Skupina mužů a dítě v bílých tričkách stojí na silnici.
Žena v černém a nese černou tašku na chodníku.
Skupina mužů sedí okolo stolu a povídají si.
Umělec na straně budovy.
Asiat v rukavicích pracuje u stánku s jídlem.
Žena sedí u stolu a pracuje na svém počítači.
Člověk se dívá na počítači na stole s telefonem a krabici.
Muž sedí na židli a dívá se lidé kolem.
Dva lidé s čepicemi stojí na poli a dávají se na kachny.
Někteří skáčou přes vysoký bar v baru.
Muž oblečený v botách a kovbojském klobouku sedí na koni, který skáče, zatímco diváci sedí v pozadí.
Dvě mladé dívky sedí na ulici a jedí kukuřici.
Tři děti v fotbalovém dresu hrají fotbal na fotbalovém hřišti, zatímco další hráč stojí v pozadí.
Malé dítě s špinavým obličejem je držená starou ženou.
Muž s brýlemi se dívá do fotoaparátu, zatímco jiný muž v modrém triku se dívá na něco.
Dva lidé sedí pod stromem a sbírá zelený zeleninu.
Mladý chlapec v modré čepici se dívá skrz dalekohled, zatímco další chlapec sleduje.
Tři muži vaří v malé kuchyni.
Mladá dívka v šedé kombinéze lyžuje na zasněženém hoře.
Skupina vodních žen shromážděných v tančí.
Muž a žena třídí v prádelně s rukavicemi.
Mladá dívka sedí na dřevěné židli.
Dva pracovníci svářejí plot poblíž rušné ulice.
Dlouhovlasý mladý muž jede na skateboardovém dni.
Na venkovním trhu jsou dva muži zasněžený lopatou a skládající si na cestě.
Muž v bílém triku hraje na bílou kytaru.
Mladá dívka ukazuje své přátel, jak používají do fotoaparátu.
Malý chlapec skáče z mola do jezera.
Žena s zelenou maskou na podivu a právě právě právě právě právě rozpil.
Muž v oranžové bundě a modré čepici leze po zasněženém hoře.
Malá dívka s blonďatými vlasy si hraje a cáká v louži.
Dítě jede na kole po chodbě s graffiti.
Gymnasta je na akci.
Lidé jdou po ulici s pouliční prodejem.
Muž v tradičním šatech, který stojí vedle svého následována, který vypadá jako jako jako oblečený jako jako oblečený.
Dvě děti si hrají na kole.
Dva muži na protihráči hrají fotbal na hřišti.
Muž skáče a pózuje pro fotku na zemi.
Dívka si dává nápoj z fontány.
Vidididíme vodu během svého vody.
Muž v laboratoři se dívá do mikroskopu.
Blonďatá dívka spí na hnědém gauči.
Muž zametá chodník před cihlovou budovou během dne.
Tři muži vaří v kuchyni.
Muž na lešení před domem se usmívá a pózuje pro fotografa.
Dvě dívky v šortkách drží za ruce v bazénu.
Čtyři asijské děti sedí na lavičce a usmívají se do fotoaparátu.
Děti jedou na kolech v něčem, co vypadá, že se zdá, že vypadá jako výspíš.
Mladý chlapec, který má na sobě kuchařské čepici a zástěru, krájí v kuchyni.
Toto je klaun na slonové školy.
Usmívající se loď drží kolo na dřevěné lodi.
Žlutý Bulldák pracuje na špinavé dráze.
Žena v červeném triku jede na bílém koni, která je galerován stromy.
Žena sedí na velice kameni a usmívá se do fotoaparátu s stromy v pozadí.
Tři muži v pestře barevných kostýmech se připravují na ulici s parketami a kočky.
Dívka si hraje v malé bazénu.
Dvě děti, chlapec ve žlutém triku a dívka v modro-bílých pruhy se houpe.
Muž hází rybářskou síť do kanoi.
Muž v šedém triku, modrých džínách a neonově neonově zelené vestě stojí na trati s bílým náklaďákem v pozadí.
Dva stavební dělníci leží na kovové plošině.
Kapela hraje na pódiu s členami v modrém.
Horolezec s tričkem zpívá do mikrofonu, zatímco hraje na bubny.
Jeden muž si dává své věci z nákupního vozíku, připravuje se na jídlo.
Muž s holí je na procházce.
Žena v bílém triku pracuje na druhém stroji.
Dívka v masce jede na ramenou na rušném chodníku.
Dvě dívky, jedna starší a v černém a druhý v bílém, vystupují na stejných baletách, před nějakými balónky.
Několik žen tancuje před budovou.
Plešatý muž jde po chodníku ve městě a mluví do telefonu.
Žena si hraje s roztaženýma rukama, zatímco malé dítě v kostýmu prochází kolem.
Skupina lidí sleduje mladých mužů hraje na bubny a používá na hudební nástroje.
Dívka s copánem a škleklekleklekleklebí.
Malá bílý auto je na vlakovém vlakovém vlakovém vlakovém vlakovém kole a možná je připraven za ní.
Dva rockisté zpívají a hrají na tmavém pódiu.
Dívka v kšiltovce, bílé košili a modrých šortkách stojí v kamenité řece.
Dva muži hrají na kytaru před velkým publikem.
Skupina lidí tancuje s nápisem, zatímco ostatní před ní.
Žena a pes prodává své zboží na staré schodech venku.
Žena a dva muži, kteří mají na sobě olympiques, mají diskuzi.
Skupina mužů v červeno-černém bundách čeká na motorkách.
Muž oblečený v bílé uniformě s číslem 3 hraje fotbal.
Muž prodává nápoj na sportovní události.
Dva muži z zeleného týmu se snaží od jinými členy týmu na míč v rugbyovém hřišti.
Děti se účastní fotbalového míče.
Člověk v modrém je na bowlingové dráze.
Několik fotbalistů na hřišti.
Mladý muž sedí na skateboardu, drží mobil a pózuje na eskalátoru.
Žena oblečená v modrém běží maraton.
Tato kapela se připravuje na vystoupení před publikem v kostele.
Hráč s číslem 50 "MMMMas" se snaží chytit míč.
Dva hráči na ledu zametá ledové cestě před obloučenou, další dav sleduje.
Muži hrají fotbal na bahnité poli.
Basketbalista v bílém dřepí, zatímco hráč v červeném se natahuje k němu.
Lidé jdou skrz obývá v starém městě.
Dvě závodní auta, jeden z nich a druhý v modrém, jedou na boku, zatímco je sleduje několik diváků.
Fotbalista v bílé uniformě drží fotbalový míč.
Velmi mladý chlapec se dívá na malého předmět.
Žena a dítě jdou po ulici.
Hokejový zápas se spoustou lidí sleduje.
Tři ženy skáčou na míčky v trávě.
Afroameričan v modrých šortkách a červeném triku hraje tenis.
Muž a žena v bílých tričkách se objímají.
Muž mluví s rodinou držící nějaký zařízení, zatímco se dívá na ně dívá.
Je tam mladý chlapec v zeleném triku leží na bílém posteli.
Zelený cyklista se zastavuje, zatímco slunce je v pozadí.
Žena v zasněžené oblasti.
Čtyři dívky a žena se učí, jak je na nějaké zařízení.
Muž v černo-bílém triku se snaží zastavit koně.
Muž v modrém triku vyfukuje obrázek, která je žena v modrém triku, aby chytil.
Žena s červenými vlasy má hlavu hlubokým modrým vodou.
Dva mladí chlapci pózují s štěnem pro rodinou.
Čtyři děti cvičí karate, zatímco dva dospělí sledují.
Muž relaxuje na červeném gauči v nábytku.
Skupina lidí mluví u stolů.
Dva koně závodí, jeden v modré košili a červeném a druhý v oranžovém a hnědé závodí proti opuštěné pozadí.
Červené auto je před dvěma auty v pozadí.
Velký býkovi, muž, který je v rodeu s rohami, aby chytil klaun.
Muž bez trika jde k žlutém kajaku.
Chlapec na tribunách se natahuje a hází míč.
Dva týmy chlapců hrají fotbal v písku.
Dítě v modrém a dítě v bílém stojí na dlouhém betonové zdi u potoka.
Žena maluje květinu na hrnku.
Lidé jdou po rušné ulici v cizí zemi.
Opravo nad hlavou hází míč.
Dva muži, jeden v černobílém a druhý v červeném, hrají volejbal.
Muž stojí na lodi a drží síť.
Surfař, který spadl svého surfu v oceánu, zatímco se snaží jede na vlně.
Žokej se připravuje o ochutnášiny v laboratoři.
Fotbalisté skáčou do vzduchu aby odpálit míč s jejich hlavami.
Dva chlapci hrají fotbal.
Starší člověk přechází ulici s deštníkem v rukou.
Skupina běžců běží směrem směrem k dvou historického obloze.
Skateboardista jede na betonovém zdi, padá, zatímco se snaží trik.
Lidé hrají hru v bazénu.
Muž se líbá, aby se podívalovat muže.
Muž drží nápisu v malé chlapci.
Mladý muž v modrém triku sjíždí zábradlí na skateboardu ve městě.
Asiat sedí na kolejích s rostlinami.
Muž oblečený v vojenských uniformách, mává svou klobouk s lidmi, kteří sedí a dívá se na vodu.
Dvě auta jedou na závodní dráze.
Muž v černo-bílém dresu drží žlutý lyžařové tyč a připravuje se.
Dva lidé leží a líbají se po travnatém trávě.
Velmi malé dítě v džínové kšiltovce jí zelený jablko.
Fotbalový hráči běží k míči.
Muž v černé bundě a kostkovaném klobouku a bílých kalhotách hraje na elektrickou kytaru v pozadí.
Muž skáče přes plot od býka.
Žena v modrém triku a bílých šortkách hraje tenis.
Muž hraje na koncertě.
Muž nese velký kovový pásku na svém rameni.
Žena s fotoaparátem hází létající talíř pro svého hnědého psa, aby chytil.
Je zde muž, jak žena a žena pozoruje oheň nebo další dřevěnou předmět.
Dvě dívky natahují ruce v kašně, zatímco lidé prochází kolem.
Z mokré, dítě bez trika, pózuje s roztaženýma rukama.
Dva muži, jeden v bílém a druhý v modrém, zápasí.
Žena v červených bikinách skáče do míče, zatímco si hraje volejbal na pláži.
Oranžové pásku kouše blond dívka na nosu.
Žena, která má na sobě žlutou zástěru, fotí z velkého hrnku.
Dvě děti přechází malou hadicí na kamenné mostě.
Dvě africké ženy jedou na mopedu po ulici, na které vypadá jako jako národní oblasti.
Dva chlapci před plechovkou.
Mnoho jezdců v černém, jede po prašné cestě na horském kole.
Žena s tetováním fotí obraz na obrazovce s ní.
Žena v černém oblečení a bílé helmě jede na kole s stromy v pozadí.
Tým cyklistů se sklání u sebe poblíž, zatímco diváci jsou fotografie a fotí.
Čtyři fotbalisté v černém se perou o protihráče, zatímco je v bílém, zatímco chytají.
Běžec se šklebí na zahradě, zatímco je z nich je povázánovánováni.
Basketbalista v bílé uniformě s číslem 53 na něj je hráč v černém dresu s číslem 5 hráč v černém dresu.
Muž mluví do mobilního telefonu.
Profesionální baseballový hráč během hry sleduje protihráče na pálku.
Motokrosový cyklista sjíždí zatáčku v lese během podzim.
Tři basketbalisté v červeném dresu se snaží chytit míč v bílém dresu.
Chlapec skáče do nohou, zatímco skáče do vzduchu.
Dvě děti v pruhovaném tílku a černých kalhotách si hrají venku poblíž hry.
Muž s brýlemi jede na koloběžce.
Malý chlapec v baseballové kšiltovce drží pálku za hlavou s baseballem před ním.
Šest mužů sedí na poli s dřevěnými rostlinami.
Hnědý pes sbírá na kamenném povrchu.
Tento muž je oblečený ve žlutém, který drží na hnědém koni.
Muž v bílém triku a zástěře krájí ptáka.
Novomanželka používá venku s jídlem.
Běžci závodí na městské ulici s dalšími lidmi kolem.
Asiatka má na sobě sluneční brýle a jede na kole.
Nějaké děti si hrají venku v hlíně, kde jsou dva stromy.
Starší muž hraje videohry.
Dívka na břehu pláže s horou v dálce.
