Muž v oranžovém klobouku se opírá na něco.
Chlap v zeleném triku běží na trávě před bílým bílým bílým plotem.
Dívka v uniformě v uniformě s klackem před ním.
Pět lidí v zimním bundách a helmách stojí ve sněhu, v pozadí je v pozadí.
Lidé opravuje střeše.
Muž ve světle světle barevných oblečení stojí před skupinou mužů a stojí v červených šatech.
Skupina lidí stojí před domem.
Chlapec v červeném dresu se snaží chytit, zatímco se snaží chytit míč, zatímco se snaží chytit míč v modrém dresu.
Muž pracuje na budově.
Muž v vestě sedí na židli a drží si.
Matka a mladá dívka si užívá si venku venku.
Muži hrají volejbal s míčem, jeden míč, jeden z nich je ve vzduchu.
Žena drží jídlo v kuchyni.
Muž sedí u stolu u stolu.
Tři lidé sedí v restauraci.
Dívka v džínových šatech jde po cestě.
Blondýna drží ruce v písku.
Žena v šedém svetru a černé čepici stojí v obchodě.
Člověk v pruhovaném triku leze na hoře.
Dva muži, kteří se dívají, zatímco se dívají.
Lidé stojí před budovou.
Teenager hraje na hřišti na hřišti.
Žena dělá trik na pláži.
Muž stojí u skupinou lidí v baru.
Žena používá vozík, zatímco jiný muž fotí.
Žena v růžovém svetru a zástěře čistí stolu.
Muž krájí sníh.
Skupina asijských chlapců čekají na nějaké jídlo.
Ženy v tradičním oblečení, v tradičním záchranné vesty.
Jeden muž drží hlavu a připravuje se na hlavě, aby se do obličeje.
Šest lidí jede na kole po cestě.
Dvě mladé dívky sedí na kraji ulice.
Dítě je ve vodě.
Tři lidé sedí u stolu před budovou, které vypadá jako z nich je vyta.
Tři chlapci stojí na molu v plavkách.
Na ulici je žena v ruce, zatímco žena píše na ulici.
Žena si hraje na výle.
Na ulici, které se dívá z nich se dívá do objektivu.
Mladá žena se dívá na fotku.
Muž bez trička stojí v šortkách, zatímco stojí na kamenech.
Dívka v oranžové vestě je ve vodě.
Muž v uniformě a muž v modrém triku stojí před autem.
Lidé sedí ve vlaku.
Dítě se houpe do vzduchu v lese.
Muž v červeném triku se připravuje na výle.
Dva muži v plavkách skáče do vzduchu na pláži.
Batole vaří s mužem.
Otec a dvě děti jsou venku a dvě děti, zatímco pracují venku na trávě.
Muž vaří na sporu.
Muž v džínách hraje na pláži s červeným míčem.
Lidé jdou po chodníku vedle obchodem.
Muž předvádí trik, zatímco je je je je ve vzduchu.
Velká skupina lidí na ulici.
Muž na kolečkových bruslích se snaží do vody.
Žena v džínách jde kolem autobusu s brýlemi, která se slunečními brýlemi přes rameno.
Muž v růžovém triku sedí v trávě a skáče do vzduchu.
Auto zaparkovaná na pláži.
Dva muži v černém oblečení.
Muž ve žlutém kalhotách zvedá ruku.
Dva muži v kloboucích a čepicích jdou blízko vody.
Skupina mužů dělá tým na židlích na židlích.
Chlapec si hraje s nápisem, zatímco dívka se dívá na něj dívá.
Dav lidí je na veřejném prostranství v parku.
Muž sedí na lavičce, drží psa a dívá se na vodu.
Chlapec a jeho syn si hrají na hřišti.
Žena v modré bundě se dívá na lavičce, zatímco sedí na lavičce, zatímco ostatní lidé lidé jsou za ním.
Hnědý pes stojí na pláži.
Žena sedí s kabelkou, která je obklopen novinami.
Muž griluje na dvorku.
Žena zpívá v klubu s mužem za ním.
Muži v noci předvádí v noci.
Dítě sedí na židli a dívá se na kameru.
Dvě ženy a tři muži se dívají na oceánu.
Žena s knírem hraje na ulici, zatímco žena se dívá na kytaru.
Mladá dívka plave v bazénu.
Několik dětí se připravuje venku, aby si hrají.
Tři muži v metru si hrají okolo.
Hnědý pes jde v trávě s vyplazeným jazyem.
Lidé sedí venku v trávě a dává si pauzu.
Muž bez trika se dívá do dálky, zatímco žena sedí před davem.
Dva mladí chlapci dělají ovoce na kole.
Muž v černém triku, džínách a džínách hraje na bicí.
Mladá žena maluje obraz na zdi.
Dvě ženy se snaží z nich předvádí vysoko vysoko vysoko, které jsou obklopen dvěma dvěmami.
Muž v kuchyni vytauje v kuchyni.
Chlapec skáče na jezeře.
Muž pracuje na střeše.
Velká skupina lidí, kteří sedí venku a sedí venku venku.
Blondýna je u stolu.
Malé dítě v modrém triku a bílé košili drží žlutou plastku.
Žena s růžovými vlasy v černém oblečení mluví k muže.
Muž v zástěře vaří na jídlo.
Dívka skáče přes řeku, aby chytil z útesu.
Pracovník s vousy klečí vedle dvou žen.
Starší muž se dívá na své ruce a dívá se.
Dítě v bílém oblečení dělá trik.
Tři muži ve stejných vestách jsou venku.
Žena fotí dítě v růžovém klobouku, zatímco má na sobě růžové čepici.
Skupina asijských asijských dětí sedí na modrých židlích v modrém židlích.
Mladý chlapec v dresu hází míč do vzduchu.
Šťastná žena se připravuje v kavárně.
Pracovník jede na cestě v lese.
Žena běží po cestě, aby chytil míč, aby chytil míček.
Muž v uniformě pracuje, který se snaží na sobě další člověk.
Skupina lidí leze v parku.
Cyklista se chystá na kole, aby chytil na modré helmě.
Muž dělá stojku na střeše.
Dítě sedí u stolu a drží obličej.
Hnědý pes se brodí do jezera.
Matka si prohlíží dvě chlapci, aby se z nich z nich je na velké velké velké vodě.
Malé dítě jde vedle červené tašky.
Dívka sedí na kole s brýlemi, zatímco další dívka fotí.
Černý pes skáče do vody.
Muž v bílých kalhotách a modré košili kope do vzduchu.
Dva Indická muži se účastní z nich.
Chlapec s ochrankou v obchodě a rukou stojí na hlavě v obchodě.
Dva muži se baví na kánoi na oceánu během západu slunce.
Lidé stojí na rušné ulici, v metru a je venku.
Muž se opírá o zeď v ruce.
Dva hnědí psi běží sněhem.
Na pódiu hraje na pódiu před publikem.
Dítě v pyžamu se dívá na kameru.
Muž sedí vedle stolu.
Tato žena má na sobě stejné místnosti a směje se.
Lidé v budově, jeden fotí.
Čtyři bílí psi s náhubkem skáče přes červené zdi.
Žena v modrém triku drží dítě.
Dva lidé sedí na pláži a sedí ve vodě.
Stará žena pracuje na střeše.
Chlapec stojí v popředí a dívá se na hřišti.
Muž v modrém kabátě používá chlapce.
Tři hnědí psi skáčou na sobě v modrém.
Chlapec visí z okna z okna.
Muž v šedém triku skáče přes písku.
Dítě ve žlutém triku skáče a skáče dolů.
Pracovník ve žluté bundě je vysoko, aby se snaží na budově.
Muž v obleku se baví, aby se baví na sobě.
Skupina lidí se účastní pivo na baru s nápisem.
Muž skáče po útesu přes oceánu.
Muž v černém jde do vzduchu ve sněhu.
Kráráráka skáče přes míč.
Žena v čepici a čepici se usmívá, zatímco má venku před obchodem.
Prrrník se prochází v parku.
Muž v zelené přilbě a žluté vestě se žlutou vlajkou.
Dítě v růžovém oblečení tančí na hlavě a je obklopen stromy.
Pes s náhubkem na něco na řece.
Muž se připravuje na prodejní den.
Muž v červeném triku se chystá na fotku.
Mladá žena v bílém drží tenis.
Chlapec v červeném triku skáče do písku.
Muž, který má na sobě bundu, má na dřevěné lavičce.
Muž v bílém triku se dívá z okna z okna.
Žena drží malé dítě.
Šest dětí bez trika si hrají ve vodě a je ve vodě.
Dva lidé jedou na kole skrz horu.
Dívka skáče na chodníku blízko řeky.
Muž v oranžovém triku a helmě.
Malý chlapec si hraje s hračkou a dívá se na něj dívají.
Malá dívka otevírá šetku.
Žena v modrém obleku se baví před dvěma ženy.
Malá dívka se snaží snaží na sobě modrou vlasy.
Hnědý a černý pes běží po cestě v lese.
Dva psi si hrají u stromu.
Toto jde v černém kabátě a černých kalhotách na schodech, zatímco hnědý pes na kameru.
Dva muži oblečené v zeleném připravují jídlo v restauraci.
Muž oblečený v černé bundě a klobouku jde kolem Barararararararar.
Pes běží venku s žluté hračkou.
Pes v dresu běží ve sněhu.
Rodina si hraje na pláži s psem.
Žena a dítě se objímají, zatímco vypadá vypadá vypadá, co vypadá, co vypadá.
Dva muži a žena stojí venku.
Skupina mužů používá na lodi, aby z vody.
Muž pije z papíru, zatímco čte noviny.
Muž v černém a černých hraje na lavičce.
Mladý chlapec v modrém dresu a žlutých šortkách hraje fotbal.
Muž stojí na kamenné kamenné kamenné kamenné kamenné zdi.
Pes pije venku na trávě.
Dvě ženy v tílku se dívají na kameru.
Muž sedí na židli a připravuje se na židli.
Malé dítě v zelené botách si hrají v lese.
Muž, který používá kovku, aby se dostl.
Muž sedí u stolu s stolem a pije pivo před ním.
Chlapec v černém triku a modrých džínách drží červený míč.
Tmavovlasý muž v brýlích a brýlích sedí na trávě.
Pes běží na závodní dráze.
Dý muž bez trika s nápisem "etemem nad balkou.
Dvameckýmeckýmecký ovčák se perou na sebe.
Tento skupina lidí stojí kolem stánku na akci.
Hnědo--bílý pes si dává hračku.
Muž s bílými vlasy hraje na akordeon uprostřed budovy.
Žena s hnědými vlasy sedí venku na lavičce.
Muž vedle kole hraje na kole.
Dvě děti balancuje na zdi a drží provaz.
Muž jede na motorce na dráze.
Mladá žena s dlouhými vlasy si prohlíží obličej na dřevěné dřevěné dřevěné podlaze.
Žena v hnědém triku sedí na zelené lavičce.
Pes jde po kamenech přes malé řece.
Mladý muž v bílém triku a zelené šortkách stojí na snowboardu.
Skupina lidí, kteří jsou u deštníky.
Muž na kole s nápisem na kole na kole.
Muž hází skok do vody, zatímco dva psi se dívají.
Skupina turistů hraje na nástroje pod stanem u vody.
Pohled na ulici ve městě.
Mladá žena drží bílý provaz na dne.
Dva lidé v modrých tričkách jsou venku s býem.
Černý pes se brodí do bazénu.
Kovboj jede na kole po dráze.
Cyklista předvádí trik na kole.
Pracovník v oranžovém vestě používá odpadky.
Dva dělníci pracují na stavbě, zatímco pracují na stavbě.
Tři muži jdou po kopci.
Asijská žena v růžových šatech pózuje na mostě, aby se z nich je napsáno.
Mladý muž na kytaru v kuchyni.
Tři chlapci si hrají s nápisem a kyblíky.
Tři dělníci jsou na chodníku.
Lidé se usmívají v lese vedle jezera.
Skupina žen se shromáždila v kostele.
Skupina mladých mladých dospělých skáče v noci.
Dva muži jedou na koních, jeden modré, jeden modré, jeden z vody.
Dva dělníci se dívají na cihlové budovy.
Žena v červeném svetru a džínách sedí na ruce.
Dva mladíci si hrají na nemě, zatímco se dívají.
Daka odpočívá a čeká na letišti.
Muž ve žlutém kabátě je z nich se dívá.
Muž a chlapec na kamenné pláži.
Žena na lodi, která má na sobě černé tričko "PP."
Chlapec sedí na a dívá se z mikroskopu.
Mladá dívka v růžových šatech skáče venku.
Mnoho lidí sedí kolem stanu.
Mladý muž v černém triku, který hraje na kterém je napsáno "P."
Muž prodává na silnici blízko silnice, aby se zastaveneny.
Dívka ve žlutém se směje na sobě v oranžovém, zatímco dívka v modrém se dívá.
Pes skáče přes překážku.
Pes s černým obojkem v lese a vyzzzzí.
Dva hnědí psi si hrají ve vodě.
Muž s knírem a vousy drží ceduli, který má na kterém je napsáno, který má na něj.
Muž, který má na sobě na sobě stejné oblečení, má na sobě rozzku.
Muž v černém triku rybaří na pobřeží.
Dva psi se perou na sebe.
Dva muži se snaží na chodníku, zatímco prochází kolem auta.
Muž sedí na zákazníky a čeká na zákazníky.
Daa v autobuse s ním za nimi.
Dvě ženy v bílých tričkách jdou k hře.
Malé dítě v oranžové vestě drží v modrém kajaku.
Lidé jdou po cestě v parku.
Tři mladí dospělí se baví v davu lidí, zatímco se dívá.
Žena a dítě venku před obchodem.
Černý muž a dvě ženy si povídají si.
Dívka v maskáských kalhotách sedí na vrcholu budovy.
Světle hnědý pes běží nahoru.
Chlapec pózuje s velkou zelenou v ruce.
Plešatý muž, který má na sobě hnědé a černý pes, zatímco černý pes skáče.
Dav na rušné ulici.
Černý pes má na sobě žluté a černý pes běží po dráze.
Muž v sandálech sedí na chodníku blízko tašky.
Muž a žena sedí na schodech a povídají si.
Dítě se dívá na střeše v obchodě.
Muž pije z žluté kelímku kolem lidí na rušné rušné rušné rušné ulici.
Chlapec se opírá o auto s květinami na střeše.
Žena v růžových šatech mluví před davem.
Muž na svatbě den.
Mladá žena v černém triku a džínách zametá.
Žena s čepicí leze na útesu poblíž velkého vody.
Velký černý černý pes běží po trávě s hračkou v puse.
Chlapec v šortkách dělá trik.
Malý chlapec v červených kalhotách stojí na ulici.
Žena píše na telefonu, zatímco je obklopen deštníky.
Os mužů si hrají na pódiu a hraje na sobě ve vzduchu.
Muž v oranžové kombinéze a ochranné čepici pomáhá pomáhá modrou tričko.
Muž a dvě dívky, zatímco drží jídlo před vodou.
Muž v červeném triku sleduje psa na dráze.
Chlapec v červeném a bílých plavkách plave v bazénu.
Asijská žena si užívá vlasy.
Starší žena a malé dítě v růžovém triku si hrají s krátkými vlasy.
Malý černý pes skáče přes překážku.
Hnědý muž v zeleném triku hraje venku na trumpetu.
Muž mluví na telefonu s nohama.
Skupina dětí sedí na modro------bíbíbíbí.
Černý chlapec sedí v písku.
Malý pes sleduje dva psi, jak si hrají na poli.
Lidé sedí v kruhu před velkou budovou.
Jeden pes skáče, zatímco druhý se dívá.
Blondýna se houpe na houpačce.
Jeden muž a dvě ženy, kteří se baví přes bílého sklenice.
Asiat vaří venku venku.
Hnědý pes se chystá chytit frisbee.
Několik lidí si hraje, zatímco hraje na kytaru.
Mladý chlapec stojí vedle písku.
Tři malé děti jdou po travnatém hřišti.
Muž, který má na sobě bojové umění.
Muž na kole jede na hoře.
Chlapec v modrém a žluté botách běží po prašné cestě.
Žena v oranžové bundě sedí na lavičce.
Muž dělá trik na skateboardu.
Muž v uniformě předvádí umění ve vzduchu.
Žena prodává ovoce na chodníku.
Dva týmy jsou na hřišti.
Dítě v modrém triku skáče z lavičce.
Voják ve žlutém poli je v kuchyni.
Skupina mladých mladých lidí se zastavuje v tělocvičně.
Mladý muž jede na skateboardu z růžovém zábradlí.
Mladý chlapec skáče z nich na posteli.
Dva lidé v oblecích, jeden v modrých kostýmech, jeden z nich stojí na silnici.
Muž v modrém triku běží s číslem.
Asijská asijník pózuje na kameru.
Muž, který vypadá, že běží maraton.
Hokejisté se snaží na zápasu během hry.
Fotbalista v oranžovém dresu se usmívá a drží míč.
Dva muži jedou na skateboardu, zatímco ostatní se dívají.
Tým v bílém a zlatém dresu na hřišti.
Malá dívka tlačí po travnatém hřišti.
Skupina asijských dětí oblečené v bílých tričkách a bílých kloboucích se dívá na dav.
Chodci jdou po ulici se dívají na dítě v kostýmu.
Hnědý pes běží po pláži.
Dva muži v uniformách stojí vedle ženy.
Varararararararararka během výlele, kde je z nich má na kterém je vystavenenenenenen a vyvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv.
Cyklista skáče přes překážku.
Pár sedí v bílém židlích a usmívá se na kameru.
Malé děti jsou na malé vlaku.
Surfař v modrých plavkách jede na skále.
Chlapec skáče do vzduchu.
Dva mladí muži se snaží míč, aby chytil míč na hřišti.
Lidé jdou po dlážděné cestě obklopen stromy.
Mladý chlapec v bílých kalhotách skáče z gauči.
Chlapec v oranžovém triku je zanananananananan.
Žena v sandálech a modrých džínách, džínách, bílém triku drží v bílém triku.
Tři lidé se usmívají a drží cedule.
Lidé stojí vedle auta na ulici.
Dva muži v kloboucích.
Chlapec ve vzduchu se snaží chytit míč.
Mladý chlapec s modrou čepicí má na hlavě.
Červenovlasý muž s dredy sedí a hraje na kytaru.
Muž jí jídlo s dítětem v klíně.
Afroameričan drží něco, který drží něco, který je v ruce.
Žena si prohlíží dav lidí s lidmi.
Muži, který se dívají, zatímco muž v obleku a drží v obleku.
Dav je na baru.
Dívka v bílém a dívka v zeleném jde kolem modrého auta.
Muž používá kozku.
Člověk surfuje na vlně v oceánu.
Drác si prohlíží něco.
Nevěsta a ženich se baví pod kolovem.
V pozadí stojí v pozadí, zatímco muž v pozadí jde s červenou šálou.
Černo-bílý pes skáče přes zábradlí na trati.
Žena v svetru čte knihu.
Několik lidí se dívá přes zábradlí v tmavém místnosti.
Muž v bílém triku skáče na skále.
Dospívající chlapec se dívá do kuchyni a je v kuchyni.
Lidé drží na hudební hudební hudební hudební hudební nástroje, které je v davu.
Tři muži se připravují na poli v poli.
Dvě ženy a muž se dívají na knihu.
Tři děti, které jsou z nich stojí u stánku, zatímco stojí u stánku.
Kuchař pózuje na kameru, zatímco vaří vaří.
Mnoho lidí uprostřed ulice.
Ka skáče na kole s hlavou.
Malá dívka běží na pobřeží.
Bílý člověk se skbí na vodě ve vodě.
Dva muži se baví, zatímco stojí před stánkem, zatímco stojí za ním, zatímco stojí za ním.
Žena v růžovém sukni drží dítě.
Hokejista ve žlutém dresu se snaží chytit míč.
Muž jde kolem velkého velkého nápis, která je napsáno "P."
Tři chlapci v zelených tričkách a zelených kalhotách pózují na vrchu skluzavky.
Muž tančí se svým psem.
Bílý pes běží v mělké vodě.
Denenenenenenka jsou na hřišti s kapelou.
Skupina dětí si hrají na zahradě, zatímco se dívá.
Skupina žen hraje na hudební nástroje.
Malá dívka ve fialovém šatech leží na podlaze.
Muž s dlouhými vlasy se usmívá své vousy.
Dva černí psi, černý pes, černý pes a bílý pes ve sněhu.
Muž v dresu skáče do basketbalku, aby chytil míč.
Žena sedí venku s modrým domem a užívá si si užívá si.
Děti sedí na muže v obleku.
Hnědo-bílý pes skáče přes vodu v písku.
Dav se shromáždila okolo vody v dešti.
Několik mužů, kteří jsou v tradičním tradičním oblečení na rohu ulice.
Mladý muž se dívá na sněhu ve sněhu.
Fotbalista, který má na sobě míč, má míč.
Žena v černém triku se slunečními brýlemi.
Čtyři ženy, kteří mají na sobě sobě stejné šaty, mají na sobě šaty.
Člověk hraje na nástroj.
Dívka v černém oblečení s číslem číslem číslem běží po trávě.
Dítě, který má na sobě na sobě na sobě sobě sobě sobě sobě sobě sobě sobě sobě sobě na sobě stejné s číslem.
Starší muž a mladá dívka se snaží na práci.
Zrý chlapec v žlutém triku je ve žlutém triku.
Pouliční ulice s mostem a autem.
Muž jede na býku do vzduchu.
Chlapec skáče, aby chytil míč.
Děti se dívají, zatímco dva lidé se dívají.
Lidé jdou po zárorororororororodu s stromy v pozadí.
Malá dívka kope do vzduchu.
Dva muži se snaží, aby se snaží z vody na chodníku, aby z nich z nich je z nich je z nich je na chodníku.
Dva muži sedí u davu a dívají se na dav.
Záá žena, která stojí na pódiu a jí na něco.
Žena leží na gauči a směje se.
Rozhodčí je na podlaze a jedna žena, jedna žena v černém.
Perka skáče přes plot.
Tři psi si hrají s sebe v poli.
Dvě malé děti jsou na písku.
Usmívající se chlapec si hraje v listí.
Tito lidé stojí venku a stojí venku.
Zatímco se zastavuje s nápisem, který má na kterém je na kterém je na kterém je v pozadí.
Dívka v tričku má na sobě tlamě.
Zá skupina lidí se účastní vodu ve vodě.
Muž stojí na ulici.
Paaka se účastní od stánku s jídlem.
Dva muži jedou na koních, zatímco je z nich je je vytali.
Dva lidé stojí na vrcholu hory.
Mladá dívka si užívá na sněhu.
Tři muži se usmívají a připravuje se.
Člověk píše na skále ve třídě.
Muž v černém triku sedí u stolu s ním před ním.
Čtyři lidé sedí na travnatém travnatém kopci a dívají se na skále.
Chlapec s skateboardu skáče na skateboardu ve vzduchu.
Muž v oranžovém triku hraje tenis.
Pes s červeným obojkem je v modrém.
Chlapec si užívá venku venku.
Pracovník v oranžovém obleku pracuje na kus papíru.
Muži v kloboucích stojí okolo rodeu.
Jsou tam dva psi ve sněhu a jeden má něco v puse.
Krásná dáma si dává pauzu, aby si dává jídlo.
Velký pes běží za bílým psem.
Baseballový hráč v bílém dresu s klackem.
Muž v bílém triku se dívá s nápisem, jak si hraje s nápisem.
Černý koni se snaží do plotu, aby se snaží snaží do trávě.
Dráráka se připravuje na své ruce.
Dva muži a dívka se usmívá.
Dítě se opírá o šetku, zatímco se dívá na hlavě, zatímco se dívá.
Černý černý pes se prochází po sněhu, aby chytil míč na sněhu.
Mladá dívka stojí vedle žluté kuchyňu v kuchyni.
Dvě děti si hrají na hřišti.
Tenista v zeleném triku drží své ruce.
Chlapec v červeném obleku hraje ve vodě.
Dítě v červeném kabátě a čepici drží velkou velkou sníh.
Dva policisté v oranžových bundách stojí venku s bílým stanem.
Dva lidé stojí vedle stromu na zemi.
Dva muži sedí u kamenné budovy.
Malé dítě s brýlemi drží dítě v červeném svetru a žluté svetru.
Černo-bílý pes si hraje s bílým míčem.
Dva lidé se líbají na chodníku před lidmi, zatímco lidé jdou kolem.
Žena hraje volejbal.
Dva velcí psi bojují v poli.
Hnědý pes skáče přes překážku.
Muž v pruhovaném triku kouří cigaretu na ulici.
Malá dívka drží malé chlapce na klíně.
Muž se snaží na velmi velmi velmi velmi velmi krásné prkně.
Děti se snaží na kttttttt.
Cyklista se opírá o kole kolem po dráze.
Dva lidé a z nich jsou u stánku.
Mladý chlapec se snaží na kole, jak jede na kole.
Chlapec v červeném triku a černých šortkách zametá po cestě.
Afroameričan stojí před obchodem.
Muž hraje na nástroj vedle stromu.
Dvě ženy drží ruce a usmívá se do objektivu.
Dý pes jde po trávě.
Baseballový hráč v černém triku se snaží míček v bílém triku.
Žena drží velkou velkou výzku.
Dva psi, jeden s míčem v puse běží po trávě.
Dva dospělí a dvě děti sedí na lavičce v parku.
Žena v travnatém travnatém poli je na poli.
Muž pracuje u skupině lidí.
Skupina lidí na ulici se baví na akordeon.
Muž sedí na lavičce a snaží se na své své svého svého svého svého.
Starý muž v metru si čte noviny.
Starší muž v brýlích připravuje jídlo.
Muž předvádí trik na kole, zatímco stojí na kole.
Muž dělá na pláži.
Několik lidí v parku jí u stolu.
Dvě ženy se zastavují na strom stromu.
Kovboj v rodeu se snaží, aby se snaží snaží dostl.
Pes skáče skrz překážku.
Zá žena s dlouhými vlasy v růžovém triku s růžovými vlasy v růžovém triku s nápisem.
Muž opravuje kolo.
Dvě dívky v sukních tančí před obchodem v ulici.
Žlutý pes nese klacek u vody.
Dívka v šedé svetru si dává míč.
Horolezec fotí.
Tři ženy ve světle světle světle světle světle světle světle světle šatech drží u stánku.
Hnědý pes skáče v lese.
Mladý chlapec v bílém triku a pruhovaném triku drží tenis.
Dva psi běží od fotoaparátu v lese.
Dívka si hraje ve fontáně.
Tři mladíci stojí a stojí vedle sebe.
Dva turisté jdou po cestě u stromů.
Tři hráči se snaží chytit míč.
Dva chlapci přechází ulici, zatímco chytil míč.
Muž drží další další další muž.
Bílý pes na hoře se připravuje na něco, v pozadí je v pozadí.
Chlapec jede na skateboardu na skateboardu.
Dlouhovlasý muž hraje na lavičce.
Tři jezdci se drží na pódiu a stojí na pódiu.
Dva chlapci s červenými vlasy v červených šatech.
Mladý chlapec visí na oblečení.
Malá dívka v růžovém drží na baru.
Muž v zeleném skáče na svém motorce.
Žena si hraje s dvěma chlapci v parku.
Čtyři lidé hrají fotbal na pláži.
Dvě mladé dívky, jeden má na kole, jeden má na kole, v pozadí.
Dva velcí velcí psi běží přes sněhem.
Žena stojí v zeleném poli a drží bílý pes se na hnědé psa.
stolu fotí na venkovním trhu.
Dva lidé sedí u stolu a opírá se o zeď.
Dva muži se smějí a smějí se.
Dítě leží na hnědém poli a směje se.
Muž a žena sedí a sedí a sedí.
Dvě ženy zápasí v bazénu.
Muž v bílém triku jde s rukama v ruce.
Dva lidé se opírá o jezeře.
Několik lidí sedí u stolu v oblečení.
Dvě dívky v modrém oblečení, jeden v růžovém, jeden v růžovém, jeden v růžovém, druhý v růžovém, druhý v růžovém dresu.
Čtyři lidé sedí na hromadě lodi.
Skupina lidí jede na lodi.
Cyklista v oblecích jede skrz les.
Muž v zeleném triku jde po pláži.
Několik mužů stojí okolo auta.
Dva muži pracují pod jídlem v bílém autě.
Děti skáče z břehu do bazénu.
Muž na kraji zdi se chystá na zdi.
Žena v pruhovaném oblečení je na kole.
Dívka v černém pózuje na kameru.
Muž v šortkách stojí u vody.
Čtyři muži sedí na schodech v kostele.
Vlelelelelelelele.
Gymnastka v červeném a bílé čepici je na baru.
Starší dáma v zeleném svetru si prohlíží zeleninu.
Dva muži, kteří se baví v baru s nástroji.
Učitelka v bílých šatech a malá dívka si hraje s bílými šaty.
Malé dítě spí ve svém posteli s hračkou na klíně.
Žena jí v trávě na krásném dni.
Muž jde po ulici vedle červených budovami s červenými červenými červenými červenými červenými červenýmimi.
Žena, která má na sobě čepici a čepici.
Zá žena, která používá velkou koko, zatímco stojí na poli.
Muž v obleku předvádí před dvěma dvěma dvěma dvěmami.
Muž ve formálním oblečení hraje na chodníku na ulici.
Starší muž sedí na židli a jí.
Žena v bílém triku pracuje za pultem v kavárně.
Muž s oblečením stojí na střeše auta.
Dvě děti se dívají na koních skrz malou plot.
Mnoho okna s nápisem na které je napsáno.
Žena v růžovém svetru přeskakuje obličej, zatímco stojí před nápisem, zatímco stojí venku.
Kovboj dělá své ruce s kapelou.
Muž ve žlutém triku a muž v modrém triku mluví.
Tři děti sedí na gauči s nápisem v pozadí.
Dívka v červeném triku skáče do míče.
Muž pózuje se zeleným brýlemi.
Muž v restauraci se usmívá, zatímco se usmívá v restauraci.
Muž je u stánku s ovocem s mnohami.
Muž v černé bundě hraje na kytaru.
Skupina tančí v průvodu.
Muž stojí na kamenné útesu a dívá se do vody.
Policisté se dívají z autobusu.
Dva policisté středního věku se dívají na parkovišti v noci.
Dva muži v modrých tričkách se dívají na hru.
Skupina mužů v modrých uniformách stojí spolu.
Mladá žena dělá na pláži.
Velký dav lidí stojí kolem v parku a hrají na hudební nástroje.
Muž v klobouku s nápisem vybílllll.
Muž griluje na venkovním venkovním venkovním venkovním akci.
Dva muži prodává ovoce na trhu.
Hnědovlasá žena v bílých bikinách se naklání do mikrofonu.
Chlapec ve slunečních brýlích běží za ním.
Muž v klobouku drží ruku, co vypadá že se opírá o o ot.
Muž v kostkované košili ukazuje z černých rukavicích.
Dva muži v bílém židlích sedí ve dveřích.
Mladá dívka v červených šatech má na sobě černé čepici.
Muž v červené uniformě a bílé uniformě stojí na hřišti s modrým míčem a modrým míčem.
Lidé skáče přes horu na trávě.
Lidé se dívají na ledě, zatímco jsou v pozadí.
Lidé na stole před velkou velkou oknem.
Kráráráccc na rušné ulici, zatímco je ho ho ho ho ho.
Muž v rukavicích nese na poli.
Fotograf se připravuje na zrcadle u kavárně.
Zá žena drží dítě na akci.
Žena sedí ve středním věku s dvěma dvěma dvěma dětmi a dva muži.
Žena sedí u cihlové zdi v budově.
Tři mladé ženy sedí, zatímco sedí na červeném židlích.
Žena v modrém triku jde v vesnici.
Šest dětí sedí na schodu, s nápisem a vyboumi.
Hnědý pes si hraje s klackem na pobřeží.
Dva psi si hrají, který má na sobě sluneční brýle, který má na sobě sluneční brýle.
Dítě na motorce se usmívá.
Několik lidí se shromáždila kolem velkého stolu.
Setetetka se zastavuje na akci.
Barararararararara se prochází po dne.
Žena v modré helmě a červených kalhotách jede na motorce.
Několik mužů, kteří mají na sobě bojové umění, zatímco pracují v tělocvičně.
Mladá žena a muž oblečený v kostýmu s mnoha lidmi v pozadí.
Muž v uniformě jde po ulici s dvěma auty a dvěma auty.
Mladá žena leze po skále.
Starší muž ve světle modré bundě pracuje na ulici.
Lidé se dívají na balkóně z okna na stole.
Muž zpívá a hraje na kytaru do mikrofonu.
Dva muži sedí v restauraci.
Dvě ženy v šortkách běží po pláži.
Stavební dělníci si povídají u auta.
Pohled z okna, který má na sobě černé čepici, v černém klobouku a černé čepici, stojí v černém klobouku a druhý muž v černém klobouku.
Skupina lidí si hrají na předmět.
Malá dívka v modrém oblečení leze po ulici.
Skupina mužů sedí a mluví za zeleným ovocem.
Muž ve žlutém oblečení stojí za mikrofonem pod mikrofonem.
Hnědý pes s fialovým fialovým obojkem v tlamě.
Muž, který se dívá na umění blízko vody.
Žena s nápoji a ženou s batohem.
Dítě v červeném kabátě leží ve vzduchu, zatímco leží ve sněhu vedle červeného.
Žena sedí vedle sebe a dívá se na parku.
Tři muži stojí na pódiu, jeden má na sobě brýle a drží kytaru.
Žena si dává na kole ve vodě.
Žena v červených šatech tančí s mužem v obleku.
Dva malí psi se psem s tenisovým míčem.
Muž s vousy a vousy sedí na lavičce v parku.
Afroameričan stojí v pozadí a v pozadí.
Mladá dívka se snaží aby se snaží chytit.
Asiat sedí v restauraci a žluté židlích.
Dítě jí jídlo, zatímco sedí v židli a má na sobě modrou židli.
Šedovlasý muž v černých rukavicích se prochází po trávě.
Žena čte knihu, zatímco sedí v červených židlích.
Dítě, zatímco žena jede na ramenou.
Rodina jde po chodníku, zatímco muž sedí ve sněhu, zatímco muž sedí na klíně.
Člověk sedí na vrchu obchodu s nápisem.
Muž v růžovém triku a černé bundě se sluchátky.
Mladý muž se chystá chytit míč.
Muž a dívka jede po chodníku.
Žena s růžovými vlasy se baví po chodníku a drží růžové psi.
Muž v obleku drží nápoj ve městě a jde po chodníku vedle ulice.
Muž skáče s otevřeným domem v pozadí.
Člověk v červené bundě s černými kalhotkami drží koko.
Žena si dává ruku na svém vozíku.
Muž v bílém zástěře vaří venku na něco s ženou v hnědé bundě.
Žena s čírem, která čeká na přechodu a čeká na přechodu.
Skupina mužů jde po ulici.
Na cestě vedle silnice s mnoha mnohamimimi.
Skupina lidí v černém stojí na lodi u cihlové zdi.
Muž nese pivo pivo pivo.
Muž středního věku sedí a hraje na akordeon.
Dívka s zelené vlasy, s dlouhými vlasy, stojí venku a stojí venku venku.
Mladá dívka v růžovém triku běží na pláži.
Skateboardista v černém triku a džínách jede po městě.
Muž v bundě fotí velké budovy.
Lidé na kolečkových bruslích je fotbal.
Na rušné ulici je pár, kteří se prochází po rušné ulici v rušné ulice.
Skupina lidí jdou po ulici.
U ulice poblíž ulice s několika lidmi, který má na sobě sluneční brýle a má na sobě sluneční brýle.
Nějací lidé se objímají blízko okna.
Tento hráč s modrou helmou, který se snaží na míč a míč.
Žena v červeném kabátě se snaží chytit chytit míček.
Nějací lidé sedí na lavičkách pod stromy před budovou.
Muž v obleku sedí u autobusu.
Africká muž je u prázdné bílé balóóóóky a jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně jasně béžovéééky.
Mladá žena jí a jí něco.
Muž v obleku a klobouku hraje na kytaru.
Žena v červeném vestě pracuje na počítači.
Lidé stojí ve městě, jeden z nich je do obličeje.
Muž používá zrcadle k zrcadle.
Lidé si hrají u stánku, zatímco sedí u nich sedí a jedí.
Dva mladí muži jedou na velmi velmi velmi velmi velmi malé koni.
Žena v šatech jde po ulici kolem ulice.
Brrrrr v obchodě se připravuje na své názku a dává si.
Muž s brýlemi je na zemi a je na zemi.
Dítě si hraje s hračkami a černobílou.
Mladá dívka nese kytaru v lese.
Muž v batohem jde po ulici.
Dva muži se baví před obchodem v obchodě.
Žena v černém drží něco v puse.
Skupina lidí sedí venku okolo malého stolu.
Muž jede na kole po rampě.
Žena v černém tílku a čepici skáče do dálky.
Tři mladé dívky jdou po chodníku.
Žena s dlouhými vlasy je u stánku.
Muž skateboarduje na skateboardu, zatímco jiný muž sleduje.
Muž v černém kabátě stojí před nápisem.
Muž a žena zpívá venku.
Mladá dívka s blonďatými vlasy a bílými vlasy leží v trávě.
Mladá žena si hrají fotbal s červeným míčem, který má na sobě v ruce.
Žena, která je z nich je ve vzduchu za ním.
Muž se prochází, zatímco je je je v pozadí.
Skupina mužů stojí na hřišti.
Rušná den na venkovním hřišti.
Muž s čepicí v puse opravuje jídlo.
Dvě malé děti jsou v plavkách.
Lidé sedí na lavičce ve městě s nápisem a s nápisem "Pem."
Stavební dělníci, kteří stojí s jídlem.
Muž bez trika stojí v černých šortkách a stojí na pobřeží.
Kaka se dívá na dalu, zatímco se dívá.
Lidé si hrají, jeden muž v modrém triku a druhý v modrém triku a ostatní jsou za ním.
Lidé stojí před domem.
Žena se dívá na muže, zatímco mluví.
Muž středního věku v bílých šortkách a džínách se dívá na silnici.
Dva muži v oranžových oranžových oblecích a sandálech stojí blízko velkého velkého velkého sochy.
Dva lidé jsou na lodi v lodi.
Muž a žena stojí na ulici ve městě.
Hasič se shromažďují z okna v metru.
Čtyři muži, tři z nich mají na sobě modré a sedí na sobě modro-------------------žlutém oblečení.
Tento skupina skupina skupina lidí sedí venku na lavičkách.
Muž v červeném triku jde kolem bílého stánku a bílé, který má na kterém je napsáno "P."
Vleleletttttttttt.
Starší muž s brýlemi v puse a čepici se dívá do objektivu.
Malé tanečnice si hrají s otevřenými na housle před obchodem.
Muž v červeném obleku tančí s ženou.
Dva lidé se dívají na noci v noci.
Dva cyklisté, kteří mají na sobě ochranném oblečení, jeden skáče do vzduchu a druhý se dívá do vzduchu.
Několik mužů v oranžovém se shromáždila na venkovním venkovním akci.
Dvě mladé dívky běží po chodníku před cihlovou budovou.
Dva muži lezou po hoře.
Dítě leží na zemi vedle vody.
Pes se snaží za mužem a žena.
Mnoho lidí na trhu se dívá na něco.
Dva mladí muži hrají na pódiu.
Muž bez trika pije pivo do vody.
Dva lidé stojí venku vedle sebe a hraky.
Čtyři lidé jedou na kole po ulici blízko ulice.
Žena v růžovém triku a brýlích.
Žena v červeném triku zvedá ruku, aby se prochází kolem davu.
Chlapec v bílých šortkách skáče do jezera.
Malá dívka se dívá skrz dalekohled na pláži.
Několik dělníků v oranžových vestách jsou do země.
Člověk v obleku stojí před budovou.
Stavební dělníci, kteří se pokouší ottttt.
Muž jede na koni s mužem za ním za ním za ním.
Afroameričan jde po ulici.
Dva kovboj pózují na fotku.
Žena s vousy se sluchátky v úzu.
Žena v zeleném triku mluví do telefonu.
Malé dítě nese malé dítě na hlavě.
Skupina lidí sedí v židlích.
Člověk v šátku stojí na ulici před sebou.
Asijé člověk v červeném triku a černých kalhotách se prochází přes beton.
Černý pes a hnědý pes s míčem.
Muž v černé vestě drží ceduli.
Muž v poli s nápisem v poli.
Muž v obleku a žena v obleku čeká s nápisem v pozadí.
Dítě jde po chodníku s mnoha vlajkami.
Černý pes běží po trávě s hračkou v puse.
Bararararttttttttttttttttttttttttttt na svém kole v zatá zatálllllllllllllllllllllllllllllll.
Pes se dívá na trávě, aby chytil míč.
Skupina studentů sedí a připravuje se na výle.
Lidé jedou po ulici v noci.
Velký šedý muž a muž na kole.
Muž v oranžovém triku a chlapec jede na kole s dalšími lidmi.
Mladý muž a žena blízko velkého velkého sochy.
Surfař v červeném a modrých modrých modrých kalhotách se na molu.
Muž v černém klobouku fotí na ulici.
Muž stojí na rušné ulici a dívá se na hlavě.
Žena v černých šatech má na klíně ve žlutém šatech.
Skupina lidí na ulici.
Motorkář dělá trik u sebe.
Tři lidé jdou po cestě, zatímco jedna žena se dívá na kameru.
Několik asijských mužů v černém oblečení je v místnosti.
Žena v červeném sukni jde po ulici v pozadí.
Brrrka v modrém oblečení a růžovém obleku hraje na hlavě.
Lidé v bílých šatech se dívá z okna v bílých šatech, sedí na kraji ulice.
Muž sedí na lavičce pod velkým stromem.
Tři muži v červeném a bílých kalhotách, bílých kalhotách, bílých kalhotách, černých kalhotách a černých kalhotách drží vlajky.
Lidé se účastní umění.
Asijé Asiat se prochází s nápisem a v obchodě.
Tito lidé lezou po schodech, aby chytil horu.
Malé dítě v modrém oblečení se dívá do stromů v dáli.
Lidé se dívají na děti v obchodě.
Muž s čepicí hraje na ulici.
Chlapec stojí s třemi dívky.
Usmívající se usmívá na sobě má na sobě batoh před brýlemi.
Čtyři muži se dívají na zelené mostě.
Žena, která je na místě před modrým lidmi.
Dospělý muž běží za ním, který běží za ním.
Denenenenenenenen a jídelně v městě je ve městě a je ve městě.
Africká muž středního věku se opírá ott.
Policista na kole čeká na světle světle světle světle.
Skupina mužů sedí okolo stolu.
Skupina mužů středního věku, kteří jsou venku v parku.
Žena mluví, zatímco jde venku po dne.
Mladý muž v šedém triku a černých kalhotách.
Dva lidé jedou na motorce s mnoha mnoha mnoha lidmi.
Dvě ženy v uniformách stojí s dalšími dalšími budovami v obchodě.
Tři dívky se usmívají na fotku.
Žena v černé bundě a žluté bundě se dívá na lavičce, zatímco sedí na lavičce.
Červený muž pije z vody z fontány.
Dva muži a žena jdou po ulici.
Muž středního věku s červenými vlasy a brýlemi drží dítě.
Mladý chlapec v červeném klobouku jede na koni.
Dva chlapci si hrají na chodníku.
Malá dívka v černém obleku drží na pláži.
Starý muž v klobouku a klobouku sedí na gauči.
Dva chlapci se dívají na vlně a drží ruce, aby z nich jsou v ruce.
Mladý pár sedí na chodníku a povídají si.
Mladý chlapec v košili a čepici se dívá dolů dolů a drží ceduli.
Tři lidé sedí u stolu u stolu.
Chlapec v černém triku a červeném triku se dívá dolů, zatímco ostatní lidé se dívají.
Muž jde před barevnými zdí.
Mladý muž, který jde s mužem, zatímco další dívky, které jsou na sobě mají na něj.
Muž, který si dává na stromě v kavárně.
Pět lidí jdou po schodech vedle ženy v růžovém triku a hnědé košili a hnědé košili a hnědé sukni.
Skupina lidí na venkovním trhu.
Dva chlapci, kteří si užívají venku ve venkovním oblasti obklopen lidmi.
Žena v džínové bundě jde po chodníku.
Muž jede na koni s mnoha mnohamimimimi, který sedí na straně a sedí na straně.
Muž v kostkované košili čte noviny.
Chlapec v kočárku má na sobě zelené košili a drží knihu.
Dvě děti sedí u boku a jí.
Lidé jedou na kole a jsou v helmách a jsou na ulici.
Dav lidí jede na kole.
Muž, který sedí na nástupišti a je je je rozhodl.
Muž na kole jede na kole.
Muž oblečený oblečený oblečený oblečený oblečený v barevném, který sedí a kouří cigaretu.
Dva muži v oblecích pod deštníkem a deštníkem před graffiti.
Starý muž v bílém triku jede na kole po ulici.
Muž jede na koni, aby se snaží chytit trik.
Kovboj se snaží na koni, zatímco jede na koni.
Dva cyklisté v helmách jedou kolem prázdné poli.
Muž se opírá o něco a tlačí něco.
Muž v parku jede na vozíku vedle v parku.
Člověk s tetováním se dívá na fotku a dívá se do objektivu.
Muž v černém triku a džínách stojí na chodníku.
Chlapec a dívka stojí na chodníku, zatímco se dívají.
Několik lidí v modrém oblečení a jeden v černém svetru.
Žena a pes sedí na bílém lavičce blízko pláže.
Dvě ženy jdou venku ve velkém budově.
Skupina mužů a dítě v bílých tričkách stojí na ulici.
Žena v černém a černé nese tašku na chodníku.
Skupina mužů sedí okolo stolu a povídají si.
Muž na straně budovy.
Asiat v rukavicích pracuje na jídlo.
Žena sedí u stolu, zatímco pracuje na počítači.
Člověk se dívá na židli s nápisem a telefonuje.
Muž sedí na židli a dívá se na něj.
Dva lidé v kloboucích stojí na poli, aby se snaží na kt.
Nějací lidé skáče vysoko vysoko vysoko vysoko ve výskoku.
Muž oblečený v botách a klobouku sedí na koni, zatímco sedí v popředí.
Dvě mladé dívky sedí na ulici a jí jídlo.
Tři děti v uniformách hrají dva hráči v pozadí a druhý v pozadí stojí na hřišti.
Malé dítě s špinavým obličejem, která je žena.
Muž s brýlemi se dívá na kameru, zatímco muž v modrém triku se dívá.
Dva lidé sedí pod stromem.
Mladý chlapec v modré čepici se dívá skrz dalekohled, zatímco další chlapec sleduje.
Tři muži vaří v kuchyni.
Mladá dívka, která má na sobě šedou frisbee na zasněžené hoře.
Skupina žen se shromáždila v sukních.
Muž a žena jsou v obleku s nápisem s nápisem.
Mladá dívka sedí na dřevěné židli.
Dva dělníci zápasí u plotu blízko rušné ulice.
Dlouhovlasý muž dělá trik na zábradlí za slunečného dne.
Na venkovním trhu se dva muži a dva muži z kopce.
Muž v bílém triku hraje na kytaru.
Mladá dívka ukazuje své své své své ruce.
Malý chlapec skáče z mola do jezera.
Žena v zeleném klobouku se usmívá a se, zatímco se dívají.
Muž v oranžové bundě a modré čepici leze po zasněžené hoře.
Malá dívka s blonďatými vlasy si hraje a hraje v louku.
Dítě jede na kole po ulici s nápisem v pozadí.
Gymnastka je na akci.
Lidé jdou po ulici s stromem.
Muž v tradičním šatech vypadá, zatímco stojí vedle ní, zatímco je je je je z nich je napsáno.
Dvě děti si hrají na kole.
Dva muži na hřišti hrají fotbal v poli.
Muž skáče a pózuje na zemi.
Dívka fotí z vody.
Brrrrr se brodí vodou.
Muž v kostkované bundě se dívá skrz mikroskop.
Blonďatá dívka spí na hnědém gauči.
Muž zametá chodníku před cihlovou budovou.
Tři muži vaří v kuchyni.
Muž na lešení se usmívá před domem a usmívá se.
Dvě dívky v šortkách drží ruce v bazénu.
Čtyři děti sedí na lavičce a smějí se do objektivu.
Děti jedou na kole, co vypadá že se zdá, že je vyrál.
Mladý chlapec, který má na sobě červené čepici a čepici, v kuchyni.
Toto je na sobě klaunu.
Usmívající se usmívá na dřevěné lodi.
Cyklista dělá trik, aby se snaží snaží chytit.
Žena v červeném triku jede na bílém koni, který je obklopen stromy.
Žena sedí na velkém kameni a usmívá se na kameru v pozadí.
Tři muži v barevných kostýmech, kteří mají na ulici a má na sobě sluneční brýle.
Dívka si hraje v bazénu.
Dvě děti, chlapec ve žlutém triku a dívka v modré košili se houpe na modro------------žlutém triku.
Muž hází síť do sítě.
Muž v šedém triku, modrých džínách a modrých džínách stojí na dráze s bílým vestou.
Dva dělníci leží na kovu přes zábradlí.
Je tam kapela hraje na pódiu s modrou modrou modrou.
Horolezec s trikem zpívá do mikrofonu, zatímco hraje na bubny.
Muž, který si dává dává hlavu z okna, aby se připravuje z nich se snaží chytit.
Muž s holí jde po ulici.
Žena, která má na sobě bílé košili pracuje na šetu.
Dívka v klobouku jede na chodníku a muž v rušné ulici.
Dvě dívky, jedna v černém a jeden v černém, jeden v bílém, tančí před nimi.
Několik žen předvádí před budovou.
Plešatý muž jde po chodníku, zatímco mluví do mobilu.
Žena si hraje s hračkou, zatímco dítě v kostýmu jde kolem malé dítě v kostýmu.
Skupina mladých lidí se dívají na bubny, zatímco hraje na hudební nástroje.
Dívka s názkou a ochranným ochrannou na kolečkových bruslích.
Malý bílý auto je na kole a stojí za ním.
Dva muži zpívá a hrají na pódiu.
Dívka v kšiltovce, bílé košili a modrých šortkách stojí v lese.
Dva muži hrají na kytaru před velkou publikem.
Několik lidí tančí s nápisem před sebou, zatímco ostatní ostatní ostatní lidé.
Žena a pes prodává na schodech před budovou.
Žena a dva muži, kteří jsou na sobě mají na sobě stejné oblečení.
Skupina mužů v červeném a černých bundách čeká na motorkách.
Muž oblečený v bílém dresu s číslem číslem hraje na fotbalovém hřišti.
Muž prodává zboží na akci.
Dva muži ze zelené tým se snaží z nich v černém.
Děti se snaží chytit míč, aby chytil míč.
Člověk v modrém je na kole a hází míč.
Několik fotbalistů na hřišti.
Mladý muž sedí na skateboardu, drží mobil a pózuje na chodníku.
Žena v modrém běží maraton.
Tento kapela se připravuje na vystoupení před obchodem v kostele.
Hráč amerického amerického fotbalu se připravuje na náhodu, aby se snaží snaží chytit míč.
Dva hráči se snaží na cestě před malým davem, zatímco se dívá na malé dav.
Muži hrají fotbal na poli.
Basketbalista v bílém dresu se snaží, zatímco hráč v červeném.
Lidé jdou ve městě ve městě.
Dva policisté, jeden v červeném a modré, jeden z nich jede po cestě, zatímco se dívají.
Fotbalista v bílém dresu drží míč.
Velmi chlapec se připravuje na hlavě, zatímco je na malé dítě.
Žena a dítě jdou po ulici.
Hokejista si hrají s mnoha lidmi a dívá se na něj.
Tři ženy skáčou na trávě v trávě.
Afroameričan v modrých šortkách, modrých šortkách a černých šortkách si hraje tenis.
Muž a žena v bílých tričkách se objímají.
Muž mluví, zatímco drží ceduli, zatímco se dívají, zatímco se.
Malý chlapec v zeleném triku leží na bílém posteli.
Lý cyklista se zastavuje, zatímco se snaží na něj v pozadí.
Žena se usmívá v zasněžené oblasti.
Čtyři dívky a žena se baví, jak se na kterém je na kterém je.
Muž v černém a bílé košili se snaží chytit koně.
Muž v modrém triku je žena v modrém triku, která je na něj.
Žena s červenými vlasy je ve vodě.
Dva mladí chlapci pózují na fotku a fotí.
Čtyři děti se dívají, zatímco dva dospělí se dívají.
Muž, který je na červeném gauči v obchodě.
Skupina lidí mluví u stolu.
Dva cyklisté závodí na koni, jeden v modrém a druhý v pozadí a druhý v pozadí.
Červené auto je před dvěma auty v pozadí.
Velký bý bý býk se muž v obleku, který běží po rodeu, zatímco se snaží na rodeu.
Muž bez trika jde k žlutém kajaku.
Chlapec na výlelelelelele a v tělocvičně.
Dva týmy hrají fotbal v písku.
Dítě v modrém a dítě v bílém stojí na zdi u auta.
Žena s kozkou na výleku.
Lidé jdou po rušné ulici v cizí zemi.
Pllllllllllllllllll.
Dva muži, jeden v černém a bílé a jeden v červeném, hrají volejbal.
Muž stojí v lodi a drží síť.
Surfař, který má na surfu v oceánu, zatímco se snaží snaží se snaží chytit na vlně.
Tříříříc se připravuje na výle.
Fotbalisté skáče do vzduchu, aby chytil míč.
Dva chlapci si hrají proti sebe.
Starší člověk přechází ulici s deštníkem v ruce.
Skupina běžců běží k dvěma dvěma dvěma dvěmami.
Skateboardista jede na betonovém zdi, zatímco se snaží se snaží chytit trik.
Lidé hrají hru v bazénu.
Muž se opírá o muže, aby má na muže.
Muž, který má na kterém je v ruce a mladý chlapec si čte knihu.
Mladý muž v modrém triku jede na skateboardu v městské skateboardu.
Asijský muž sedí na kole s motou.
Vlelele muž oblečený oblečený v uniformě, v pozadí se dívá do vody a dívá se do vody.
Dvě auta jedou na závodní dráze.
Muž v černém dresu a bílé dresu se připravuje na žluté, aby se připravuje.
Dva lidé leží a smějí se na travnatém trávě.
Velmi dítě v kšiltovce jí v zeleném klobouku.
Fotbalista běží, aby chytil míč.
Muž v černé bundě a černých kalhotách hraje na pódiu s mužem v pozadí.
Muž skáče přes tyč z okna.
Žena v modrém triku a bílých šortkách hraje tenis.
Muž hraje na koncertě na koncertě.
Muž nese velkou velkou zábradlí na hlavě.
Žena s kamerou hází frisbee, aby chytil frisbee.
Je tam tam tam muž, který je z nich se snaží na dřevěné dřevěné dřevěné dřevěku.
Dvě dívky se drží ruce ve fontáně, zatímco lidé jdou kolem.
Mokokrý dítě se usmívá a pózuje s rukama.
Dva muži, jeden v bílém a druhý v modrém zápasí.
Žena v červeném bikinách skáče do míče, zatímco hraje na pláži.
Malá dívka v pruhovaném s blond blond blond blond blond blondkou.
Žena, která má na sobě žluté zástěře, fotí z velkého velkého velkého velkého.
Dvě děti přechází malé kamenné kamenné kamenné útesu.
Dva Afroameré ženy jedou na kole po ulici, která vypadá že je ve městě.
Dva chlapci před domem.
Jezdec v černém jede po cestě, jede po cestě.
Žena s tetováním fotí z okna.
Žena v černém oblečení a bílé helmě jede na kole s stromy v pozadí.
Tým cyklistů jede na kterém je u sebe, zatímco se dívají.
Čtyři hráči v černém se snaží chytit míč, zatímco hráč v bílém.
Běžec je na zahradě, zatímco se dvěma dvěma dvěmamimi.
Basketbalista v bílém dresu s číslem číslem číslem číslem je na sobě v černém dresu.
Muž mluví na telefonu.
Hráč baseballu se snaží během hry, zatímco se dívají na hře.
Cyklista dělá trik v lese.
Tři hráči se snaží na míč, jeden v červeném dresu a druhý v bílém dresu se snaží chytit míč.
Chlapec skáče do vzduchu, zatímco skáče do vzduchu.
Dvě děti v pruhovaném tílku a černých kalhotách si hrají venku blízko sebe.
Muž ve slunečních brýlích jede na kole.
Malý chlapec, který má na sobě míč a drží za ním.
Šest mužů sedí na poli s dřevěnou.
Hnědý pes, který je na kamenné povrchu.
Tento muž oblečený ve žlutém drží hnědém koni.
Muž v bílém triku a zástěře se připravuje do vzduchu.
Žena používá venku, aby používá venku.
Lidé závodí na ulici s dalšími lidmi, stojí okolo lidí.
Asijská žena, která má na sobě na kole, zatímco jede na kole.
Nějaké děti si hrají venku v prašné cestě, kde jsou dva děti.
Starší muž hraje na hru.
Dívka na pobřeží s výhledem na pláži v dáli.
